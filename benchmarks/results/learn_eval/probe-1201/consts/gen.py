import random; from common import problem, write
def gen(seed, nloc, npk):
    r = random.Random(seed); locs = [f"l{i}" for i in range(nloc)]; allp = ["home"] + locs
    init = []
    for i in range(1, len(allp)):  # random tree + extra edges
        j = r.randrange(i); init += [f"(road {allp[i]} {allp[j]})", f"(road {allp[j]} {allp[i]})"]
    init += [f"(robot-at {r.choice(allp)})", "(empty)"]
    pk = [f"p{i}" for i in range(npk)]
    init += [f"(at {p} {r.choice(locs)})" for p in pk]
    return problem("homedelivery", f"hd-{seed}", [("location", locs), ("package", pk)], init, [f"(delivered {p})" for p in pk])
for i in range(16):
    write("train", f"p{i:02d}.pddl", gen(i, 2 + i % 5, 1 + i % 3 + (i >= 8)))
for k, (nl, np_) in enumerate([(12, 8), (18, 12), (24, 16)]):
    write("test", f"p{k+1}.pddl", gen(100 + k, nl, np_))
