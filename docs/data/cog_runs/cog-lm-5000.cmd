attnlab lm --corpus /usr/share/vim/vim90/doc --variants softmax,cog --layers 4 --dmodel 96 --heads 4 --ctx 96 --batch 16 --steps 5000 --eval-every 250 --seeds 5 --lr 0.01
