; Two blocks: a on the table under b; goal a on b.
(define (problem bw-2)
  (:domain blocksworld)
  (:objects a b)
  (:init (ontable a) (on b a) (clear b) (handempty))
  (:goal (and (on a b))))
