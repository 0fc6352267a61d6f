; Four blocks: reverse a tower.
(define (problem bw-4)
  (:domain blocksworld)
  (:objects a b c d)
  (:init (ontable a) (on b a) (on c b) (on d c) (clear d) (handempty))
  (:goal (and (on a b) (on b c) (on c d))))
