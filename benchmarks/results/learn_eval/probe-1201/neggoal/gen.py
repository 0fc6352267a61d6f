import random; from common import problem, write
def gen(seed, np_, nl):
    r = random.Random(seed); P = [f"q{i}" for i in range(np_)]; Ls = [f"lamp{i}" for i in range(nl)]
    init = []
    for i in range(np_ - 1): init += [f"(adj {P[i]} {P[i+1]})", f"(adj {P[i+1]} {P[i]})"]
    init.append(f"(robot-at {P[0]})")
    # a blocked cell with no lamp that is a dead end is harmless: block the cell past the end? use a dead-end-free choice:
    init += [f"(lamp-at {l} {r.choice(P)})" for l in Ls]
    init += [f"(on {l})" for l in Ls if r.random() < .5]
    goal = []
    for l in Ls:
        goal.append(f"(on {l})" if r.random() < .5 else f"(not (on {l}))")
    if not any(g.startswith("(not") for g in goal): goal[0] = f"(not (on {Ls[0]}))"
    return problem("lamps", f"lamps-{seed}", [("pos", P), ("lamp", Ls)], init, goal)
for i in range(16):
    write("train", f"p{i:02d}.pddl", gen(i, 2 + i % 5, 1 + i % 4 + (i >= 8)))
for k, a in enumerate([(10, 12), (14, 20), (18, 22)]):
    write("test", f"p{k+1}.pddl", gen(100 + k, *a))
