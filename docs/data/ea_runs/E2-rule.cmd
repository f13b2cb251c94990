attnlab train --task nt --N 16 --tau 2 --attn softmax,ea --seeds 16 --final-test 2000 --ncon 52 --epochs 2000 --eval-every 50
