attnlab train --task mix --N 16 --tau 2 --attn softmax,ea --ncon 32 --seeds 16 --epochs 5000 --lr-drop 2500 --eval-every 50 --final-test 2000
