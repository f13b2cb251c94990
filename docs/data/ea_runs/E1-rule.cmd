attnlab train --task nt --N 16 --tau 2 --attn softmax,ea --seeds 16 --final-test 2000 --ncon 32 --epochs 10000 --eval-every 100 --snapshot-every 1000
