#!/bin/bash
# test-prep.sh PRIVSEP_USER PRIVSEP_PATH
#
# Run as root, sshd (hpn and stock alike) needs its privilege-separation user
# and a root-owned privsep directory, as a package's install would create.
# Creates them when missing (saying so); as non-root, only checks.
set -euo pipefail
user=$1 dir=$2
if [ "$(id -u)" -ne 0 ]; then
	exit 0	# sshd runs unprivileged in the tests: no privsep needed
fi
if ! getent passwd "$user" >/dev/null; then
	echo "test-prep: creating system user '$user' for sshd privilege separation"
	useradd --system --no-create-home --home-dir "$dir" \
	    --shell /usr/sbin/nologin "$user"
fi
if [ ! -d "$dir" ]; then
	echo "test-prep: creating privilege separation directory $dir"
	mkdir -p -m 0755 "$dir"
fi
