"""pyclient.py drives a server with Python's http.client for
httpd's TestPythonClient: keep-alive GETs on one HTTPConnection, a POST
with a body, one whose body the handler leaves unread, a chunked POST, a
HEAD and a GET of a chunked response. It prints one JSON object a line,
one per response, for the test to check.

Usage: python3 pyclient.py HOST PORT
"""

import http.client
import json
import sys


def report(name, conn, resp, body):
    print(json.dumps({
        "name": name,
        "status": resp.status,
        "version": resp.version,  # 11 for HTTP/1.1
        "body": body.decode("latin-1"),
        "content_length": resp.getheader("Content-Length"),
        "content_type": resp.getheader("Content-Type"),
        "transfer_encoding": resp.getheader("Transfer-Encoding"),
        "will_close": resp.will_close,
        # The local port of the connection: the same port means the
        # same connection.
        "port": conn.sock.getsockname()[1] if conn.sock else 0,
    }), flush=True)


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    conn = http.client.HTTPConnection(host, port, timeout=10)

    for i in range(5):
        conn.request("GET", "/hello?i=%d" % i)
        resp = conn.getresponse()
        report("get%d" % i, conn, resp, resp.read())

    body = b"x" * 100000
    conn.request("POST", "/echo", body=body,
                 headers={"Content-Type": "application/octet-stream"})
    resp = conn.getresponse()
    report("post", conn, resp, resp.read())

    # A body the handler does not read: under net/http's 256 KiB the
    # server drops it and keeps the connection.
    conn.request("POST", "/reject", body=b"r" * 100000)
    resp = conn.getresponse()
    report("reject", conn, resp, resp.read())

    # An iterable body with encode_chunked: http.client frames each item
    # as a chunk and sends Transfer-Encoding: chunked.
    chunks = [b"abc", b"defg", b"h" * 70000]
    conn.request("POST", "/echo", body=iter(chunks), encode_chunked=True,
                 headers={"Transfer-Encoding": "chunked"})
    resp = conn.getresponse()
    report("chunked", conn, resp, resp.read())

    conn.request("HEAD", "/hello")
    resp = conn.getresponse()
    report("head", conn, resp, resp.read())

    conn.request("GET", "/big")
    resp = conn.getresponse()
    body = resp.read()
    report("big", conn, resp, str(len(body)).encode())

    conn.close()


if __name__ == "__main__":
    main()
