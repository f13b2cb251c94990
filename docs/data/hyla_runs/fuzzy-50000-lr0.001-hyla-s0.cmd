attnlab preset hyla-fuzzy --attn hyla --lr 0.001 --wd 0.1 --steps 50000 --seeds 1 --seed0 0 --eval-every 5000 --eval-tasks 2048 --snapshot-every 2500
