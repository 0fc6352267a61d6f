import random; from common import problem, write
# items have no atoms in init at all; some are not in the goal either (distractors)
def gen(seed, n, ngoal):
    r = random.Random(seed); I = [f"i{k}" for k in range(n)]
    init = ["(powered)"] if r.random() < .3 else ["(and)"][:0]
    if not init: init = []
    goal = [f"(packed {i})" if r.random() < .5 else f"(processed {i})" for i in r.sample(I, ngoal)]
    return problem("machine", f"m-{seed}", [("item", I)], init or [""], goal)
for i in range(16):
    n = 2 + i % 6 + (i >= 8) * 2
    write("train", f"p{i:02d}.pddl", gen(i, n, max(1, n // 2)))
for k, a in enumerate([(20, 10), (30, 15), (40, 20)]):
    write("test", f"p{k+1}.pddl", gen(100 + k, *a))
