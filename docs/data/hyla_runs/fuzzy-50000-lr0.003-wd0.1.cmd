attnlab train --task fuzzy --attn softmax,hyla --lr 0.003 --wd 0.1 --steps 50000 --seeds 3 --eval-every 5000 --eval-tasks 2048 --snapshot-every 2500
