attnlab train --task nt --N 2 --tau 5 --ncon 16 --attn softmax,ea --seeds 16 --epochs 4000 --eval-every 5 --qk-input raw --final-test 64
