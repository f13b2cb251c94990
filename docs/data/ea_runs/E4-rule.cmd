attnlab train --task nt --N 16 --tau 2 --attn softmax,ea --seeds 16 --final-test 2000 --ncon 16 --epochs 5000 --eval-every 50
