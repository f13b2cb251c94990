attnlab train --task nt --N 16 --tau 5 --attn softmax,ea --ncon 128 --seeds 16 --epochs 10000 --eval-every 100 --final-test 10000 --snapshot-every 1000
