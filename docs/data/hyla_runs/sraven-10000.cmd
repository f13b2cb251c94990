attnlab train --task sraven --attn softmax,hyla --lr 0.001 --warmup 200 --steps 10000 --seeds 3 --eval-every 1000 --eval-tasks 1024 --snapshot-every 500
