; Twenty blocks from random towers into one tower (seeded; the IPC-2000 Blocks goal form),
; a test far larger than the 4-8 blocks the shipped model was trained on.
(define (problem bw-20)
  (:domain blocksworld)
  (:objects b1 b2 b3 b4 b5 b6 b7 b8 b9 b10 b11 b12 b13 b14 b15 b16 b17 b18 b19 b20)
  (:init (ontable b10) (on b13 b10) (on b15 b13) (on b17 b15) (clear b17) (ontable b19) (on b18 b19) (on b20 b18) (on b8 b20) (clear b8) (ontable b16) (clear b16) (ontable b3) (clear b3) (ontable b12) (clear b12) (ontable b2) (clear b2) (ontable b14) (on b7 b14) (on b1 b7) (clear b1) (ontable b6) (on b11 b6) (on b4 b11) (clear b4) (ontable b9) (clear b9) (ontable b5) (clear b5) (handempty))
  (:goal (and (on b7 b18) (on b17 b7) (on b4 b17) (on b15 b4) (on b9 b15) (on b13 b9) (on b14 b13) (on b20 b14) (on b16 b20) (on b6 b16) (on b11 b6) (on b12 b11) (on b3 b12) (on b5 b3) (on b10 b5) (on b1 b10) (on b2 b1) (on b8 b2) (on b19 b8))))
