import random; from common import problem, write
def gen(seed, n):
    r = random.Random(seed); L = [f"l{i}" for i in range(n)]
    init = ["(= (fuel) 0)", f"(at {L[0]})"]
    for i in range(1, n):
        j = r.randrange(i); init += [f"(road {L[i]} {L[j]})", f"(road {L[j]} {L[i]})"]
    goal = [f"(visited {l})" for l in r.sample(L[1:], min(3, n - 1))]
    return problem("fuelmove", f"f-{seed}", [("loc", L)], init, goal, "(:metric minimize (fuel))")
for i in range(16): write("train", f"p{i:02d}.pddl", gen(i, 2 + i % 10))
for k, n in enumerate([20, 30, 40]): write("test", f"p{k+1}.pddl", gen(100 + k, n))
