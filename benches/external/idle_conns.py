#!/usr/bin/env python3
# The server memory of idle HTTP/1.1 connections (benches/README.md, 10 000
# subscribers): opens N keep-alive connections to HOST:PORT, 100 at a time,
# sends one GET of the agent card on each, reads the answer, keeps them all
# open and prints the RSS of the server PID before and after. Needs
# `ulimit -n` above N on both sides.
#
#   python3 benches/external/idle_conns.py 127.0.0.1:PORT 10000 PID
import asyncio, resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
host, port = sys.argv[1].split(':'); n = int(sys.argv[2]); pid = sys.argv[3]
def rss():
    for l in open(f'/proc/{pid}/status'):
        if l.startswith('VmRSS'): return int(l.split()[1])
async def one(sem, conns):
    async with sem:
        r, w = await asyncio.open_connection(host, int(port))
        w.write(b'GET /.well-known/agent-card.json HTTP/1.1\r\nhost: x\r\n\r\n')
        await w.drain()
        head = await r.readuntil(b'\r\n\r\n')
        ln = [int(x.split(b':')[1]) for x in head.split(b'\r\n') if x.lower().startswith(b'content-length')][0]
        await r.readexactly(ln)
        conns.append((r, w))
async def main():
    before = rss(); conns = []; sem = asyncio.Semaphore(100)
    await asyncio.gather(*(one(sem, conns) for _ in range(n)))
    await asyncio.sleep(1)
    after = rss()
    print(f'conns={len(conns)} rss_before_kib={before} rss_after_kib={after} per_conn_kib={(after-before)/len(conns):.1f}')
asyncio.run(main())
