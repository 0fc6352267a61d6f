import random; from common import problem, write
def gen(seed, nr, nb):
    r = random.Random(seed); R = [f"r{i}" for i in range(nr)]; B = [f"b{i}" for i in range(nb)]
    init = [f"(robot-at {r.choice(R)})", "(free)"] + [f"(at {b} {r.choice(R)})" for b in B]
    goal = [f"(at {b} {r.choice(R)})" for b in B]
    return problem("eqgripper", f"eq-{seed}", [("room", R), ("ball", B)], init, goal)
for i in range(16):
    write("train", f"p{i:02d}.pddl", gen(i, 2 + i % 4, 1 + i % 3 + (i >= 8)))
for k, a in enumerate([(6, 14), (8, 22), (10, 30)]):
    write("test", f"p{k+1}.pddl", gen(100 + k, *a))
