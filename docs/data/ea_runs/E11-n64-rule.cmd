attnlab train --task ntr --N 16 --tau 2 --attn softmax,ea --ncon 64 --seeds 16 --epochs 20000 --eval-every 200 --final-test 4096 --snapshot-every 1000
