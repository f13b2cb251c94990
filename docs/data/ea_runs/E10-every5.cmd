attnlab train --task nts --N 16 --tau 2 --ncon 32 --attn softmax,ea --seeds 16 --epochs 1000 --eval-every 5 --final-test 2000
