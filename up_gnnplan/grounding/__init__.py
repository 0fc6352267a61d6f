"""Goal grounding: bind the variables of existentially quantified goals with a learned V(s; G).

Funkquist, Ståhlberg & Geffner (2024). :mod:`goal` reads the goal, :mod:`encoding` turns a
state and a partially bound goal into a model input, :mod:`dataset` labels training data.
"""
