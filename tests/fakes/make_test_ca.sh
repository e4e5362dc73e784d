#!/bin/sh
# make_test_ca.sh DIR [ADDRESS...]: a throw-away CA (DIR/ca.pem) and a server certificate for
# 127.0.0.1/localhost and each IP ADDRESS (e.g. this machine's, for a stand-in the fake nodes reach) signed
# by it (DIR/server.pem, DIR/server.key), for the HTTPS stand-ins. Made at test time, never kept.
# Follows: RFC 5280, "Internet X.509 PKI Certificate and CRL Profile", section 4.2.1 (key usage 4.2.1.3,
# subject alternative name 4.2.1.6, basic constraints 4.2.1.9, extended key usage 4.2.1.12),
# https://www.rfc-editor.org/rfc/rfc5280#section-4.2.1; and RFC 2818, "HTTP Over TLS", section 3.1 (a client
# reaching a server by IP address checks it against an iPAddress subjectAltName, so every address a client
# uses is one), https://www.rfc-editor.org/rfc/rfc2818#section-3.1.
set -eu
dir=$1
shift
san=IP:127.0.0.1,DNS:localhost
for a in "$@"; do san="$san,IP:$a"; done
mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=ddl test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$san" >ext.cnf
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
  -extfile ext.cnf 2>/dev/null
chmod 600 ca.key server.key
