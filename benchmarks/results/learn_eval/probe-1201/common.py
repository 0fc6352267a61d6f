import os
def write(folder, name, text):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f: f.write(text)
def objs(groups):
    return "\n    ".join(" ".join(names) + " - " + t for t, names in groups if names)
def problem(dom, name, groups, init, goal, metric=""):
    return f"""(define (problem {name}) (:domain {dom})
  (:objects
    {objs(groups)})
  (:init
    {chr(10).join('    '+a if i else a for i,a in enumerate(init))})
  (:goal (and
    {' '.join(goal)}))
  {metric})
"""
