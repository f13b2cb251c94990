attnlab train --task nt --N 16 --tau 2 --attn softmax,ea --seeds 16 --final-test 2000 --ncon 32 --lr 0.01 --epochs 10000 --eval-every 50 --init-gain 2
