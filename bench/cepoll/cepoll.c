/*
 * cepoll is the suite's C reference: a plain epoll echo server.
 *
 * Usage: cepoll PORT
 *
 * It runs one thread per CPU it may run on, each with its own listening
 * socket on 127.0.0.1:PORT (SO_REUSEPORT, so the kernel spreads the
 * connections) and its own level-triggered epoll. Sockets are nonblocking,
 * with TCP_NODELAY. Each thread reads into one 64 KiB buffer and writes
 * the bytes straight back; what a write leaves over is kept in the
 * connection's pending buffer, the connection then waits for EPOLLOUT and
 * is not read until that is flushed, so no byte is lost and a reader that
 * falls behind slows its writer down. End of file closes the connection:
 * it can only be read with nothing pending.
 *
 * Once every socket listens, it prints "127.0.0.1:PORT" on stdout: the
 * only thing it prints there. It exits when stdin reaches end of file,
 * which is how the suite stops it.
 */
#define _GNU_SOURCE
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>

#include "../csrv/csrv.h"

#define BUFSIZE (64 << 10)
#define MAXEVENTS 256

/* conn is one connection; pend holds the bytes a write left over. */
struct conn {
	int fd;
	char *pend;
	size_t off, len;
};

/* loop is one thread's listening socket and epoll. */
struct loop {
	int lfd, ep;
	pthread_t th;
};

static void closeconn(struct conn *c)
{
	close(c->fd); /* also removes it from the epoll set */
	free(c->pend);
	free(c);
}

/* flush writes c's pending bytes. It returns 1 when they are all out, 0
 * when the socket is full, -1 on error. */
static int flush(struct conn *c)
{
	while (c->off < c->len) {
		ssize_t n = write(c->fd, c->pend + c->off, c->len - c->off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		}
		c->off += (size_t)n;
	}
	free(c->pend);
	c->pend = NULL;
	c->off = c->len = 0;
	return 1;
}

/* watch sets the events c waits for: output while bytes are pending,
 * else input. */
static int watch(int ep, struct conn *c)
{
	struct epoll_event ev = {.events = c->pend ? EPOLLOUT : EPOLLIN, .data.ptr = c};
	return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* echo reads once from c and writes the bytes back. It returns -1 when c
 * is to be closed. */
static int echo(struct loop *l, struct conn *c, char *buf)
{
	ssize_t n = read(c->fd, buf, BUFSIZE);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	if (n == 0)
		return -1; /* end of file, and nothing is pending */
	size_t done = 0;
	while (done < (size_t)n) {
		ssize_t w = write(c->fd, buf + done, (size_t)n - done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -1;
			break;
		}
		done += (size_t)w;
	}
	if (done == (size_t)n)
		return 0;
	c->len = (size_t)n - done;
	c->off = 0;
	c->pend = malloc(c->len);
	if (c->pend == NULL)
		return -1;
	memcpy(c->pend, buf + done, c->len);
	return watch(l->ep, c);
}

static void accepts(struct loop *l)
{
	for (;;) {
		int fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				fprintf(stderr, "cepoll: accept: %s\n", strerror(errno));
			return;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct conn *c = calloc(1, sizeof *c);
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			closeconn(c);
	}
}

static void *run(void *arg)
{
	struct loop *l = arg;
	char *buf = malloc(BUFSIZE);
	struct epoll_event evs[MAXEVENTS];
	if (buf == NULL)
		die("malloc");
	for (;;) {
		int n = epoll_wait(l->ep, evs, MAXEVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (c == NULL) {
				accepts(l);
				continue;
			}
			int r;
			if (c->pend) {
				r = flush(c);
				if (r == 1)
					r = watch(l->ep, c);
			} else {
				r = echo(l, c, buf);
			}
			if (r < 0)
				closeconn(c);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	csrv_name = "cepoll";
	int port = csrv_port(argc, argv);
	int n = cpus();
	struct loop *loops = calloc((size_t)n, sizeof *loops);
	if (loops == NULL)
		die("calloc");
	for (int i = 0; i < n; i++) {
		struct loop *l = &loops[i];
		l->lfd = listener(port);
		l->ep = epoll_create1(EPOLL_CLOEXEC);
		if (l->ep < 0)
			die("epoll_create1");
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
		if (epoll_ctl(l->ep, EPOLL_CTL_ADD, l->lfd, &ev) < 0)
			die("epoll_ctl");
		int rc = pthread_create(&l->th, NULL, run, l);
		if (rc != 0) {
			errno = rc;
			die("pthread_create");
		}
	}
	csrv_serve(port);
}
