#!/usr/bin/python3
"""paramiko's SFTP server on stdin/stdout, for sftp -D and scp -D.

  hpn-sftp-paramiko.py

Serves the local file system with paramiko's SFTPServer (its protocol
code: version 3, no limits@openssh.com, one request at a time) behind a
channel that is this process's stdin and stdout.  Attributes are set here
rather than by paramiko's set_file_attr(), whose size change re-creates the
file (it would zero what an in-place upload wrote).  Ends at EOF.
"""

import os
import sys
import warnings

warnings.simplefilter("ignore")  # cryptography deprecation noise

import paramiko  # noqa: E402
from paramiko import (SFTP_OK, SFTPAttributes, SFTPHandle,  # noqa: E402
                      SFTPServer, SFTPServerInterface)


def status(e):
    return SFTPServer.convert_errno(e.errno)


def set_attr(path, attr, fd=None):
    if attr._flags & attr.FLAG_PERMISSIONS:
        if fd is not None:
            os.fchmod(fd, attr.st_mode & 0o7777)
        else:
            os.chmod(path, attr.st_mode & 0o7777)
    if attr._flags & attr.FLAG_AMTIME:
        os.utime(fd if fd is not None else path,
                 (attr.st_atime, attr.st_mtime))
    if attr._flags & attr.FLAG_SIZE:
        os.truncate(fd if fd is not None else path, attr.st_size)


class Handle(SFTPHandle):
    def stat(self):
        try:
            return SFTPAttributes.from_stat(os.fstat(self.readfile.fileno()))
        except OSError as e:
            return status(e)

    def chattr(self, attr):
        try:
            set_attr(self.filename, attr, self.readfile.fileno())
            return SFTP_OK
        except OSError as e:
            return status(e)


class FS(SFTPServerInterface):
    def canonicalize(self, path):
        return os.path.realpath(os.path.join(os.getcwd(), path))

    def list_folder(self, path):
        try:
            out = []
            for name in os.listdir(path):
                a = SFTPAttributes.from_stat(
                    os.lstat(os.path.join(path, name)))
                a.filename = name
                out.append(a)
            return out
        except OSError as e:
            return status(e)

    def stat(self, path):
        try:
            return SFTPAttributes.from_stat(os.stat(path))
        except OSError as e:
            return status(e)

    def lstat(self, path):
        try:
            return SFTPAttributes.from_stat(os.lstat(path))
        except OSError as e:
            return status(e)

    def open(self, path, flags, attr):
        mode = 0o666
        if attr is not None and attr._flags & attr.FLAG_PERMISSIONS:
            mode = attr.st_mode & 0o7777
        try:
            fd = os.open(path, flags, mode)
        except OSError as e:
            return status(e)
        if flags & os.O_WRONLY:
            fstr = "ab" if flags & os.O_APPEND else "wb"
        elif flags & os.O_RDWR:
            fstr = "a+b" if flags & os.O_APPEND else "r+b"
        else:
            fstr = "rb"
        f = os.fdopen(fd, fstr)
        h = Handle(flags)
        h.filename = path
        h.readfile = f
        h.writefile = f
        return h

    def remove(self, path):
        try:
            os.remove(path)
        except OSError as e:
            return status(e)
        return SFTP_OK

    def rename(self, old, new):
        try:
            os.rename(old, new)
        except OSError as e:
            return status(e)
        return SFTP_OK

    def mkdir(self, path, attr):
        try:
            mode = 0o777
            if attr is not None and attr._flags & attr.FLAG_PERMISSIONS:
                mode = attr.st_mode & 0o7777
            os.mkdir(path, mode)
        except OSError as e:
            return status(e)
        return SFTP_OK

    def rmdir(self, path):
        try:
            os.rmdir(path)
        except OSError as e:
            return status(e)
        return SFTP_OK

    def chattr(self, path, attr):
        try:
            set_attr(path, attr)
        except OSError as e:
            return status(e)
        return SFTP_OK

    def readlink(self, path):
        try:
            return os.readlink(path)
        except OSError as e:
            return status(e)


class Stub:
    """What SFTPServer asks of a transport."""

    def get_log_channel(self):
        return "paramiko"

    def get_hexdump(self):
        return False


class StdioChannel:
    def __init__(self):
        self.transport = Stub()

    def get_transport(self):
        return self.transport

    def recv(self, n):
        return os.read(0, n)

    def send(self, data):
        return os.write(1, data)

    def close(self):
        pass

    def get_name(self):
        return "stdio"


def main():
    ch = StdioChannel()
    server = SFTPServer(ch, "sftp", None, FS)
    server.start_subsystem("sftp", None, ch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
