import random; from common import problem, write
# fragile boxes can only be loaded by load-fragile (load has no fragile check, keep both sensible: load works for all;
# fragility just allows vans) -> solvable always.
def gen(seed, nloc, ntr, nvan, nbox, ncr):
    r = random.Random(seed); L = [f"l{i}" for i in range(nloc)]
    init = []
    for i in range(1, nloc):
        j = r.randrange(i); init += [f"(road {L[i]} {L[j]})", f"(road {L[j]} {L[i]})"]
    T = [f"t{i}" for i in range(ntr)]; V = [f"v{i}" for i in range(nvan)]
    B = [f"b{i}" for i in range(nbox)]; C = [f"c{i}" for i in range(ncr)]
    for x in T + V + B + C: init.append(f"(at {x} {r.choice(L)})")
    init += [f"(fragile {b})" for b in B if r.random() < .5] + [f"(fragile {v})" for v in V if r.random() < .5]
    goal = [f"(at {c} {r.choice(L)})" for c in B + C]
    return problem("eitherlog", f"el-{seed}", [("location", L), ("truck", T), ("van", V), ("box", B), ("crate", C)], init, goal)
for i in range(16):
    write("train", f"p{i:02d}.pddl", gen(i, 2 + i % 3, 1, i % 2, 1 + i % 2, (i // 2) % 2 + (i >= 10)))
for k, a in enumerate([(8, 2, 2, 5, 5), (10, 3, 3, 7, 7), (14, 3, 3, 10, 10)]):
    write("test", f"p{k+1}.pddl", gen(100 + k, *a))
