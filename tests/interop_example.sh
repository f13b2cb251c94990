#!/bin/sh
# docs/interop.md's C example, taken from the page as it stands, run on tests/data/gpt2_tiny (its
# token ids made small for the tiny vocabulary, its cache cut to the model's 20 positions): it must
# print the 3 prompt ids and 16 more and save the model. Usage: tests/interop_example.sh CC DIR
set -e
cc=${1:-cc} dir=${2:?usage: tests/interop_example.sh CC DIR}
awk '/^## In 20 lines/ { f = 1 } f && /^```c$/ { g = 1; next } g && /^```$/ { exit } g' docs/interop.md |
    sed -e 's|"gpt2-dir"|"tests/data/gpt2_tiny"|' -e "s|\"out-dir\"|\"$dir\"|" \
        -e 's|464, 3290, 318|4, 29, 31|' -e 's|cap = 32|cap = 20|' > "$dir/interop.c"
$cc -O2 -Wall -Wextra -I. "$dir/interop.c" -o "$dir/interop" -lm
"$dir/interop" > "$dir/interop.out"
n=$(tr ' ' '\n' < "$dir/interop.out" | grep -c '^[0-9][0-9]*$')
[ "$n" = 19 ] || { echo "interop example printed $n ids, not 19: $(cat "$dir/interop.out")"; exit 1; }
test -s "$dir/model.safetensors" && test -s "$dir/config.json"
