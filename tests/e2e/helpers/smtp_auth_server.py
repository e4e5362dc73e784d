#!/usr/bin/python3
"""A real SMTP server (aiosmtpd) on loopback that requires AUTH, for the smoke test's mail notices.

  smtp_auth_server.py PORT USER PASSWORD_FILE LOG

Mail is accepted only after AUTH PLAIN/LOGIN with USER and the password in PASSWORD_FILE (read from a
file so that it is in no process's argv). AUTH is allowed without TLS because it is loopback only.
LOG gets one line per AUTH attempt (never the password) and every message as received.
"""
import sys
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

port, user, password_file, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
with open(password_file, encoding="utf-8") as f:
    password = f.read().strip()
log = open(log_path, "a", encoding="utf-8", buffering=1)


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user
          and auth_data.password.decode() == password)
    log.write(f"AUTH {mechanism} {'accepted' if ok else 'refused'} for "
              f"{auth_data.login.decode() if isinstance(auth_data, LoginPassword) else '?'}\n")
    return AuthResult(success=ok)


class Handler:
    async def handle_DATA(self, server, session, envelope):
        log.write(f"MAIL from {envelope.mail_from} to {','.join(envelope.rcpt_tos)} "
                  f"authenticated={session.authenticated}\n")
        log.write(envelope.content.decode("utf-8", "replace") + "\n---\n")
        return "250 OK"


controller = Controller(Handler(), hostname="127.0.0.1", port=port, authenticator=authenticator,
                        auth_required=True, auth_require_tls=False)
controller.start()
try:
    while True:
        time.sleep(3600)
finally:
    controller.stop()
