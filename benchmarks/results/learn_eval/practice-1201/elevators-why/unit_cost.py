"""Write Elevators without its action costs (python unit_cost.py OUT): the domain without :action-costs, its
functions and increase effects; the problems without their function values and metric. Run 2026-12-01."""
import pathlib, re, sys
src = pathlib.Path('../shared/benchmarks/learning-practice/elevators')
out = pathlib.Path(sys.argv[1])
d = (src / 'domain.pddl').read_text().replace(' :action-costs', '')
d = re.sub(r'\(:functions.*?\)\s*\n\s*\n', '\n', d, flags=re.S)
d = re.sub(r'\(increase \(total-cost\) \([^)]*\)\)', '', d)
(out / 'train').mkdir(parents=True, exist_ok=True); (out / 'test').mkdir(exist_ok=True)
(out / 'domain.pddl').write_text(d)
for part in ('train', 'test'):
    for f in sorted((src / part).glob('*.pddl')):
        t = re.sub(r'\(:metric[^\n]*\)', '', re.sub(r'\(= \([^)]*\) \d+\)', '', f.read_text()))
        (out / part / f.name).write_text(t)
