attnlab train --task nt --N 16 --tau 2 --attn softmax,ea --seeds 16 --final-test 2000 --ncon 56 --epochs 500 --eval-every 5 --final-test 4096
