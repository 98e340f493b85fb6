#!/usr/bin/python3
"""Interop server: asyncssh or paramiko as an SSH server for hpn clients.

  pyserver.py LIB --addr A --port P --hostkey HOST_KEY --authorized PUB
      --ready FILE [--ciphers C1,C2...]

Public-key authentication only (the one key in PUB, any user name).
Serves the SFTP subsystem (the local file system) and two commands, the
ones the interop matrix sends:
    cat > PATH     write the channel's stdin to PATH
    cat PATH       send PATH on stdout
Anything else exits 127.  Writes FILE once listening; runs until killed.
"""

import argparse
import os
import shlex
import socket
import sys
import threading
import warnings

warnings.simplefilter("ignore")  # cryptography deprecation noise

from pycopy import CHUNK, pump  # noqa: E402 (beside this script)


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("lib", choices=["asyncssh", "paramiko"])
    p.add_argument("--addr", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--hostkey", required=True)
    p.add_argument("--authorized", required=True)
    p.add_argument("--ready", required=True)
    p.add_argument("--ciphers", default="")
    return p.parse_args()


def log(msg):
    print("pyserver: " + msg, file=sys.stderr, flush=True)


def parse_cat(cmd):
    """("up"|"down", path) for the two commands we serve, else None."""
    try:
        w = shlex.split(cmd)
    except ValueError:
        return None
    if len(w) == 3 and w[0] == "cat" and w[1] == ">":
        return ("up", w[2])
    if len(w) == 2 and w[0] == "cat":
        return ("down", w[1])
    return None


def ready(path):
    with open(path + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(path + ".tmp", path)


# --- asyncssh ---------------------------------------------------------------

def serve_asyncssh(a):
    import asyncio
    import asyncssh

    async def handle(process):
        cmd = process.command or ""
        what = parse_cat(cmd)
        log("exec %r" % cmd)
        if what is None:
            process.stderr.write(b"unsupported command\n")
            process.exit(127)
            return
        try:
            if what[0] == "up":
                with open(what[1], "wb") as f:
                    while True:
                        b = await process.stdin.read(CHUNK)
                        if not b:
                            break
                        f.write(b)
            else:
                with open(what[1], "rb") as f:
                    while True:
                        b = f.read(CHUNK)
                        if not b:
                            break
                        process.stdout.write(b)
                        await process.stdout.drain()
        except (OSError, asyncssh.Error) as e:
            log("exec %r: %s" % (cmd, e))
            process.exit(1)
            return
        process.exit(0)

    class Server(asyncssh.SSHServer):
        def connection_made(self, conn):
            self.conn = conn

        def connection_lost(self, exc):
            log("connection closed: %s" % (exc or "normally"))

        def auth_completed(self):
            c = self.conn
            log("authenticated; cipher=%s mac=%s client=%s" % (
                c.get_extra_info("recv_cipher"), c.get_extra_info("recv_mac"),
                c.get_extra_info("client_version")))

    async def main():
        kw = {}
        if a.ciphers:
            kw["encryption_algs"] = a.ciphers.split(",")
        await asyncssh.listen(
            a.addr, a.port, server_factory=Server,
            server_host_keys=[a.hostkey],
            authorized_client_keys=a.authorized,
            process_factory=handle, encoding=None,
            sftp_factory=True, allow_scp=False, allow_pty=False,
            password_auth=False, kbdint_auth=False, config=None, **kw)
        ready(a.ready)
        await asyncio.Event().wait()

    asyncio.run(main())


# --- paramiko ---------------------------------------------------------------

def serve_paramiko(a):
    import paramiko
    from paramiko import SFTP_OK, SFTPAttributes, SFTPHandle, SFTPServer
    from paramiko import SFTPServerInterface

    hostkey = paramiko.Ed25519Key.from_private_key_file(a.hostkey)
    allowed = paramiko.PublicBlob.from_file(a.authorized)

    def errno_status(e):
        return SFTPServer.convert_errno(e.errno)

    class Handle(SFTPHandle):
        def stat(self):
            try:
                return SFTPAttributes.from_stat(
                    os.fstat(self.readfile.fileno()))
            except OSError as e:
                return errno_status(e)

        def chattr(self, attr):
            return SFTP_OK

    class FS(SFTPServerInterface):
        def list_folder(self, path):
            try:
                out = []
                for n in os.listdir(path):
                    at = SFTPAttributes.from_stat(
                        os.lstat(os.path.join(path, n)))
                    at.filename = n
                    out.append(at)
                return out
            except OSError as e:
                return errno_status(e)

        def stat(self, path):
            try:
                return SFTPAttributes.from_stat(os.stat(path))
            except OSError as e:
                return errno_status(e)

        def lstat(self, path):
            try:
                return SFTPAttributes.from_stat(os.lstat(path))
            except OSError as e:
                return errno_status(e)

        def open(self, path, flags, attr):
            try:
                fd = os.open(path, flags, 0o644)
            except OSError as e:
                return errno_status(e)
            if flags & os.O_WRONLY:
                mode = "ab" if flags & os.O_APPEND else "wb"
            elif flags & os.O_RDWR:
                mode = "a+b" if flags & os.O_APPEND else "r+b"
            else:
                mode = "rb"
            try:
                f = os.fdopen(fd, mode)
            except OSError as e:
                os.close(fd)
                return errno_status(e)
            h = Handle(flags)
            h.filename = path
            h.readfile = f
            h.writefile = f
            return h

        def remove(self, path):
            try:
                os.remove(path)
            except OSError as e:
                return errno_status(e)
            return SFTP_OK

        def rename(self, old, new):
            try:
                os.rename(old, new)
            except OSError as e:
                return errno_status(e)
            return SFTP_OK

        def posix_rename(self, old, new):
            return self.rename(old, new)

        def chattr(self, path, attr):
            return SFTP_OK

        def canonicalize(self, path):
            return os.path.realpath(path if os.path.isabs(path) else
                                    os.path.join(os.getcwd(), path))

    def exec_cat(ch, what):
        st = 0
        try:
            if what[0] == "up":
                with open(what[1], "wb") as f:
                    pump(ch.recv, f.write)
            else:
                with open(what[1], "rb") as f:
                    pump(f.read, ch.sendall)
        except (OSError, EOFError, socket.error) as e:
            log("exec: %s" % e)
            st = 1
        try:
            ch.send_exit_status(st)
            ch.shutdown_write()
            ch.close()
        except (EOFError, socket.error):
            pass

    class Server(paramiko.ServerInterface):
        def get_allowed_auths(self, username):
            return "publickey"

        def check_auth_publickey(self, username, key):
            if (key.get_name() == allowed.key_type
                    and key.asbytes() == allowed.key_blob):
                return paramiko.AUTH_SUCCESSFUL
            return paramiko.AUTH_FAILED

        def check_channel_request(self, kind, chanid):
            if kind == "session":
                return paramiko.OPEN_SUCCEEDED
            return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

        def check_channel_exec_request(self, ch, command):
            cmd = command.decode("utf-8", "replace")
            what = parse_cat(cmd)
            log("exec %r" % cmd)
            if what is None:
                return False
            threading.Thread(target=exec_cat, args=(ch, what),
                             daemon=True).start()
            return True

    def conn(sock):
        t = paramiko.Transport(sock)
        if a.ciphers:
            t.get_security_options().ciphers = tuple(a.ciphers.split(","))
        t.add_server_key(hostkey)
        t.set_subsystem_handler("sftp", SFTPServer, FS)
        try:
            t.start_server(server=Server())
        except (paramiko.SSHException, EOFError, socket.error) as e:
            log("negotiation failed: %s" % e)
            t.close()
            return
        t.join()
        log("connection closed")

    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.addr, a.port))
    ls.listen(16)
    ready(a.ready)
    while True:
        s, _ = ls.accept()
        threading.Thread(target=conn, args=(s,), daemon=True).start()


def main():
    a = parse()
    if a.lib == "asyncssh":
        serve_asyncssh(a)
    else:
        serve_paramiko(a)


if __name__ == "__main__":
    main()
