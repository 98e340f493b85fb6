#!/usr/bin/python3
"""Interop client: asyncssh or paramiko uploads or downloads one file.

  pyclient.py LIB --host H --port P --user U --key ID_FILE --hostkey HOST.pub
      --cipher C --mode sftp|pipe up|down LOCAL REMOTE

LIB is asyncssh or paramiko.  The server's host key must be HOST.pub (an
OpenSSH public key line); anything else is refused.  "pipe" runs
"cat > REMOTE" (up) or "cat REMOTE" (down) with the data on the channel's
stdin/stdout; "sftp" uses the library's SFTP client (put/get).  Prints
"negotiated cipher=... mac=..." on stderr; exits non-zero on any error.
"""

import argparse
import asyncio
import shlex
import socket
import sys
import warnings

warnings.simplefilter("ignore")  # cryptography deprecation noise

from pycopy import CHUNK, pump  # noqa: E402 (beside this script)


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("lib", choices=["asyncssh", "paramiko"])
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--hostkey", required=True)
    p.add_argument("--cipher", required=True)
    p.add_argument("--mode", choices=["sftp", "pipe"], required=True)
    p.add_argument("direction", choices=["up", "down"])
    p.add_argument("local")
    p.add_argument("remote")
    return p.parse_args()


def log(msg):
    print("pyclient: " + msg, file=sys.stderr, flush=True)


# --- asyncssh ---------------------------------------------------------------

async def run_asyncssh(a):
    import asyncssh

    hostkey = asyncssh.import_public_key(open(a.hostkey).read())
    # (trusted host keys, trusted CA keys, revoked keys)
    known = ([hostkey], [], [])
    async with asyncssh.connect(
            a.host, a.port, username=a.user, client_keys=[a.key],
            known_hosts=known, encryption_algs=[a.cipher],
            agent_path=None, config=None) as conn:
        log("negotiated cipher=%s mac=%s server=%s" % (
            conn.get_extra_info("send_cipher"),
            conn.get_extra_info("send_mac"),
            conn.get_extra_info("server_version")))
        if a.mode == "sftp":
            async with conn.start_sftp_client() as sftp:
                if a.direction == "up":
                    await sftp.put(a.local, a.remote)
                else:
                    await sftp.get(a.remote, a.local)
            return 0
        if a.direction == "up":
            cmd = "cat > " + shlex.quote(a.remote)
            r = await conn.run(cmd, stdin=a.local, encoding=None,
                               check=False)
        else:
            cmd = "cat " + shlex.quote(a.remote)
            r = await conn.run(cmd, stdout=a.local, encoding=None,
                               check=False)
        if r.exit_status != 0:
            log("remote command %r: exit status %r, stderr %r" % (
                cmd, r.exit_status, r.stderr))
            return 1
        return 0


# --- paramiko ---------------------------------------------------------------

def run_paramiko(a):
    import paramiko

    want = paramiko.PublicBlob.from_file(a.hostkey)
    sock = socket.create_connection((a.host, a.port), timeout=30)
    t = paramiko.Transport(sock)
    try:
        t.get_security_options().ciphers = (a.cipher,)
        t.start_client(timeout=30)
        got = t.get_remote_server_key()
        if got.get_name() != want.key_type or got.asbytes() != want.key_blob:
            log("host key mismatch: got %s %s" % (
                got.get_name(), got.get_base64()))
            return 1
        t.auth_publickey(a.user, paramiko.Ed25519Key.from_private_key_file(
            a.key))
        log("negotiated cipher=%s mac=%s server=%s" % (
            t.local_cipher, t.local_mac, t.remote_version))
        if a.mode == "sftp":
            sftp = paramiko.SFTPClient.from_transport(t)
            if a.direction == "up":
                sftp.put(a.local, a.remote)
            else:
                sftp.get(a.remote, a.local)
            sftp.close()
            return 0
        ch = t.open_session()
        if a.direction == "up":
            ch.exec_command("cat > " + shlex.quote(a.remote))
            with open(a.local, "rb") as f:
                pump(f.read, ch.sendall)
            ch.shutdown_write()
            while ch.recv(CHUNK):
                pass
        else:
            ch.exec_command("cat " + shlex.quote(a.remote))
            with open(a.local, "wb") as f:
                pump(ch.recv, f.write)
        st = ch.recv_exit_status()
        err = b""
        while ch.recv_stderr_ready():
            err += ch.recv_stderr(CHUNK)
        ch.close()
        if st != 0:
            log("remote command: exit status %d, stderr %r" % (st, err))
            return 1
        return 0
    finally:
        t.close()


def main():
    a = parse()
    try:
        if a.lib == "asyncssh":
            return asyncio.run(run_asyncssh(a))
        return run_paramiko(a)
    except Exception as e:  # any library error: report it, fail
        log("%s: %s" % (type(e).__name__, e))
        return 1


if __name__ == "__main__":
    sys.exit(main())
