/*
 * curing is cepoll's echo server written on raw io_uring (no liburing):
 * what server CPU per message io_uring can reach beside epoll.
 *
 * Usage: curing PORT
 *
 * It runs one thread per CPU it may run on, each with its own listening
 * socket on 127.0.0.1:PORT (SO_REUSEPORT, so the kernel spreads the
 * connections) and its own ring, set up by that thread with
 * IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN (else
 * IORING_SETUP_COOP_TASKRUN, else no flag, as the kernel accepts). A
 * multishot accept takes the connections (TCP_NODELAY); each connection
 * has a multishot receive from the thread's provided-buffer ring (NBUF
 * buffers of BUFSIZE bytes). The bytes a receive brings are copied into
 * the connection's pending output and the buffer goes back to the ring at
 * once; the pending output is sent with IORING_OP_SEND, one send at a time
 * per connection (what comes meanwhile waits in the pending output, a
 * short send is resubmitted for the rest). A receive that ends without
 * IORING_CQE_F_MORE (out of buffers, say) is armed again; one whose
 * connection has HIWAT bytes pending is cancelled and armed again once
 * they are sent, so a reader that falls behind slows its writer down.
 * End of file closes the connection once its output is sent; an error
 * closes it at once (shutdown(2) ends what is in flight, the descriptor
 * is closed when the last completion for it has come). A completion's
 * user_data is the descriptor and the kind of operation.
 *
 * Once every ring is set up and every socket listens, it prints
 * "127.0.0.1:PORT" on stdout: the only thing it prints there. It exits
 * when stdin reaches end of file, which is how the suite stops it.
 */
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../csrv/csrv.h"

/* What <linux/io_uring.h> may lack: it is often older than the kernel.
 * (IORING_REGISTER_PBUF_RING is an enum constant there, which #ifndef
 * cannot see: the macro gives the same value.) */
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN (1U << 8)
#endif
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif
#ifndef IORING_RECV_MULTISHOT
#define IORING_RECV_MULTISHOT (1U << 1)
#endif
#ifndef IORING_ACCEPT_MULTISHOT
#define IORING_ACCEPT_MULTISHOT (1U << 0)
#endif
#ifndef IORING_REGISTER_PBUF_RING
#define IORING_REGISTER_PBUF_RING 22
#endif

#define ENTRIES 256	   /* submission queue entries per ring */
#define NBUF 64		   /* provided buffers per ring, a power of two */
#define BUFSIZE (32 << 10) /* bytes per provided buffer */
#define HIWAT (256 << 10)  /* pending output that stops the receive */
#define BGID 0		   /* the provided buffers' group */

/* The kinds of operation, in user_data's low byte; the descriptor is
 * above it. */
enum { ACCEPT, RECV, SEND, CANCEL };

static uint64_t ud(int fd, int kind)
{
	return (uint64_t)fd << 8 | (uint64_t)kind;
}

/* obuf is output: b[off:len] is still to be sent. */
struct obuf {
	char *b;
	size_t off, len, cap;
};

/* conn is one connection. out is being sent (its bytes must stay where
 * they are until the send completes); pend gathers what comes
 * meanwhile. */
struct conn {
	int fd;
	unsigned recv : 1;    /* a receive is armed */
	unsigned send : 1;    /* a send is in flight */
	unsigned paused : 1;  /* the receive is cancelled until pend is sent */
	unsigned eof : 1;     /* the peer has closed */
	unsigned closing : 1; /* to be closed once nothing is in flight */
	unsigned shut : 1;    /* shutdown(2) has ended what is in flight */
	struct obuf out, pend;
};

/* ring is one io_uring: its queues as mapped, and sqt, the submission
 * tail not yet published. */
struct ring {
	int fd;
	unsigned *sqhead, *sqtail, sqmask, sqentries, sqt;
	struct io_uring_sqe *sqes;
	unsigned *cqhead, *cqtail, cqmask;
	struct io_uring_cqe *cqes;
};

/* loop is one thread's listening socket, ring, provided buffers and
 * connections (indexed by descriptor). */
struct loop {
	int lfd;
	pthread_t th;
	pthread_barrier_t *ready;
	struct ring r;
	struct io_uring_buf_ring *br;
	char *bufs;
	unsigned short brtail;
	struct conn **conns;
	int nconns;
};

static void *mapring(int fd, size_t size, off_t off)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, off);
	if (p == MAP_FAILED)
		die("mmap ring");
	return p;
}

/* setup creates r with the first flags the kernel takes. */
static void setup(struct ring *r)
{
	static const unsigned flags[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct io_uring_params p;
	int fd = -1;
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
		memset(&p, 0, sizeof p);
		p.flags = flags[i];
		fd = (int)syscall(__NR_io_uring_setup, ENTRIES, &p);
		if (fd >= 0 || errno != EINVAL)
			break;
	}
	if (fd < 0)
		die("io_uring_setup");
	r->fd = fd;
	size_t sqsize = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cqsize = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq, *cq;
	if (p.features & IORING_FEAT_SINGLE_MMAP) {
		sq = cq = mapring(fd, sqsize > cqsize ? sqsize : cqsize, IORING_OFF_SQ_RING);
	} else {
		sq = mapring(fd, sqsize, IORING_OFF_SQ_RING);
		cq = mapring(fd, cqsize, IORING_OFF_CQ_RING);
	}
	r->sqhead = (unsigned *)(sq + p.sq_off.head);
	r->sqtail = (unsigned *)(sq + p.sq_off.tail);
	r->sqmask = *(unsigned *)(sq + p.sq_off.ring_mask);
	r->sqentries = *(unsigned *)(sq + p.sq_off.ring_entries);
	r->sqt = *r->sqtail;
	unsigned *array = (unsigned *)(sq + p.sq_off.array);
	for (unsigned i = 0; i <= r->sqmask; i++)
		array[i] = i;
	r->sqes = mapring(fd, p.sq_entries * sizeof(struct io_uring_sqe), IORING_OFF_SQES);
	r->cqhead = (unsigned *)(cq + p.cq_off.head);
	r->cqtail = (unsigned *)(cq + p.cq_off.tail);
	r->cqmask = *(unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
}

/* enter publishes the new submissions, submits them and, with wait,
 * waits for a completion. */
static int enter(struct ring *r, unsigned wait)
{
	__atomic_store_n(r->sqtail, r->sqt, __ATOMIC_RELEASE);
	unsigned n = r->sqt - __atomic_load_n(r->sqhead, __ATOMIC_ACQUIRE);
	return (int)syscall(__NR_io_uring_enter, r->fd, n, wait, wait ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
}

/* sqe returns the next submission entry, zeroed, submitting the queue
 * first if it is full. */
static struct io_uring_sqe *sqe(struct ring *r, int fd, int kind)
{
	while (r->sqt - __atomic_load_n(r->sqhead, __ATOMIC_ACQUIRE) == r->sqentries)
		if (enter(r, 0) < 0 && errno != EINTR && errno != EAGAIN && errno != EBUSY)
			die("io_uring_enter");
	struct io_uring_sqe *s = &r->sqes[r->sqt++ & r->sqmask];
	memset(s, 0, sizeof *s);
	s->fd = fd;
	s->user_data = ud(fd, kind);
	return s;
}

/* putbuf gives provided buffer bid back to the ring. */
static void putbuf(struct loop *l, unsigned short bid)
{
	struct io_uring_buf *b = &l->br->bufs[l->brtail & (NBUF - 1)];
	b->addr = (uintptr_t)(l->bufs + (size_t)bid * BUFSIZE);
	b->len = BUFSIZE;
	b->bid = bid;
	l->brtail++;
	__atomic_store_n(&l->br->tail, l->brtail, __ATOMIC_RELEASE);
}

/* bufring registers the thread's provided buffers with its ring. */
static void bufring(struct loop *l)
{
	l->br = mmap(NULL, NBUF * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	l->bufs = malloc((size_t)NBUF * BUFSIZE);
	if (l->br == MAP_FAILED || l->bufs == NULL)
		die("buffers");
	struct io_uring_buf_reg reg = {.ring_addr = (uintptr_t)l->br, .ring_entries = NBUF, .bgid = BGID};
	if (syscall(__NR_io_uring_register, l->r.fd, IORING_REGISTER_PBUF_RING, &reg, 1) < 0)
		die("IORING_REGISTER_PBUF_RING");
	for (unsigned short i = 0; i < NBUF; i++)
		putbuf(l, i);
}

static void armaccept(struct loop *l)
{
	struct io_uring_sqe *s = sqe(&l->r, l->lfd, ACCEPT);
	s->opcode = IORING_OP_ACCEPT;
	s->ioprio = IORING_ACCEPT_MULTISHOT;
	s->accept_flags = SOCK_CLOEXEC;
}

static void armrecv(struct loop *l, struct conn *c)
{
	struct io_uring_sqe *s = sqe(&l->r, c->fd, RECV);
	s->opcode = IORING_OP_RECV;
	s->ioprio = IORING_RECV_MULTISHOT;
	s->flags = IOSQE_BUFFER_SELECT;
	s->buf_group = BGID;
	c->recv = 1;
}

/* cancelrecv cancels c's receive; only a failed cancel completes. */
static void cancelrecv(struct loop *l, struct conn *c)
{
	struct io_uring_sqe *s = sqe(&l->r, c->fd, CANCEL);
	s->opcode = IORING_OP_ASYNC_CANCEL;
	s->flags = IOSQE_CQE_SKIP_SUCCESS;
	s->addr = ud(c->fd, RECV);
}

/* sendout sends what is left of c->out. */
static void sendout(struct loop *l, struct conn *c)
{
	struct io_uring_sqe *s = sqe(&l->r, c->fd, SEND);
	s->opcode = IORING_OP_SEND;
	s->addr = (uintptr_t)(c->out.b + c->out.off);
	s->len = (unsigned)(c->out.len - c->out.off);
	s->msg_flags = MSG_WAITALL | MSG_NOSIGNAL;
	c->send = 1;
}

/* flush starts sending c's pending output unless a send is in flight:
 * pend becomes out and out, sent, becomes the new pend. */
static void flush(struct loop *l, struct conn *c)
{
	if (c->send || c->closing || c->pend.len == 0)
		return;
	struct obuf o = c->out;
	c->out = c->pend;
	c->pend = o;
	c->pend.off = c->pend.len = 0;
	sendout(l, c);
}

/* queue appends n bytes to c's pending output. It returns -1 when out
 * of memory. */
static int queue(struct conn *c, const char *p, size_t n)
{
	struct obuf *o = &c->pend;
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 4096;
		while (cap < o->len + n)
			cap *= 2;
		char *b = realloc(o->b, cap);
		if (b == NULL)
			return -1;
		o->b = b;
		o->cap = cap;
	}
	memcpy(o->b + o->len, p, n);
	o->len += n;
	return 0;
}

/* settle closes c when it is to be closed, or has reached end of file
 * with its output sent, and nothing is in flight; while something is, it
 * shuts c down so that it completes. */
static void settle(struct loop *l, struct conn *c)
{
	if (c->eof && !c->send && c->pend.len == 0)
		c->closing = 1;
	if (!c->closing)
		return;
	if (c->recv || c->send) {
		if (!c->shut)
			shutdown(c->fd, SHUT_RDWR);
		c->shut = 1;
		return;
	}
	l->conns[c->fd] = NULL;
	close(c->fd);
	free(c->out.b);
	free(c->pend.b);
	free(c);
}

/* rearm arms c's receive again when it has ended, unless c is closing or
 * at end of file, or while HIWAT bytes wait to be sent. */
static void rearm(struct loop *l, struct conn *c)
{
	if (c->recv || c->eof || c->closing)
		return;
	if (c->paused && c->pend.len < HIWAT)
		c->paused = 0;
	if (!c->paused)
		armrecv(l, c);
}

static void accepted(struct loop *l, int fd)
{
	if (fd >= l->nconns) {
		int n = l->nconns ? l->nconns : 64;
		while (n <= fd)
			n *= 2;
		struct conn **cs = realloc(l->conns, (size_t)n * sizeof *cs);
		if (cs == NULL) {
			close(fd);
			return;
		}
		memset(cs + l->nconns, 0, (size_t)(n - l->nconns) * sizeof *cs);
		l->conns = cs;
		l->nconns = n;
	}
	struct conn *c = calloc(1, sizeof *c);
	if (c == NULL) {
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->fd = fd;
	l->conns[fd] = c;
	armrecv(l, c);
}

static void received(struct loop *l, struct conn *c, int res, unsigned flags)
{
	if (!(flags & IORING_CQE_F_MORE))
		c->recv = 0;
	if (flags & IORING_CQE_F_BUFFER) {
		unsigned short bid = (unsigned short)(flags >> IORING_CQE_BUFFER_SHIFT);
		if (res > 0 && !c->closing && queue(c, l->bufs + (size_t)bid * BUFSIZE, (size_t)res) < 0)
			c->closing = 1;
		putbuf(l, bid);
	}
	if (res == 0)
		c->eof = 1;
	else if (res < 0 && res != -ENOBUFS && res != -ECANCELED && res != -EINTR)
		c->closing = 1;
	flush(l, c);
	if (c->pend.len >= HIWAT && c->recv && !c->paused) {
		cancelrecv(l, c);
		c->paused = 1;
	}
	rearm(l, c);
	settle(l, c);
}

static void sent(struct loop *l, struct conn *c, int res)
{
	c->send = 0;
	if (res < 0 && res != -EINTR && res != -EAGAIN) {
		c->closing = 1;
	} else if (res >= 0 && (c->out.off += (size_t)res) == c->out.len) {
		c->out.off = c->out.len = 0;
		flush(l, c);
		rearm(l, c);
	} else if (!c->closing) {
		sendout(l, c); /* the rest */
	}
	settle(l, c);
}

static void complete(struct loop *l, const struct io_uring_cqe *cqe)
{
	int fd = (int)(cqe->user_data >> 8);
	int kind = (int)(cqe->user_data & 0xff);
	if (kind == ACCEPT) {
		if (cqe->res >= 0)
			accepted(l, cqe->res);
		else if (cqe->res != -ECONNABORTED && cqe->res != -EINTR && cqe->res != -EAGAIN)
			fprintf(stderr, "curing: accept: %s\n", strerror(-cqe->res));
		if (!(cqe->flags & IORING_CQE_F_MORE))
			armaccept(l);
		return;
	}
	if (kind == CANCEL)
		return; /* the receive had ended already */
	struct conn *c = fd < l->nconns ? l->conns[fd] : NULL;
	if (c == NULL) {
		if (cqe->flags & IORING_CQE_F_BUFFER)
			putbuf(l, (unsigned short)(cqe->flags >> IORING_CQE_BUFFER_SHIFT));
		return;
	}
	if (kind == RECV)
		received(l, c, cqe->res, cqe->flags);
	else
		sent(l, c, cqe->res);
}

static void *run(void *arg)
{
	struct loop *l = arg;
	struct ring *r = &l->r;
	setup(r);
	bufring(l);
	armaccept(l);
	if (enter(r, 0) < 0)
		die("io_uring_enter");
	pthread_barrier_wait(l->ready);
	for (;;) {
		if (enter(r, 1) < 0 && errno != EINTR && errno != EAGAIN && errno != EBUSY)
			die("io_uring_enter");
		unsigned head = *r->cqhead;
		unsigned tail = __atomic_load_n(r->cqtail, __ATOMIC_ACQUIRE);
		for (; head != tail; head++)
			complete(l, &r->cqes[head & r->cqmask]);
		__atomic_store_n(r->cqhead, head, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	csrv_name = "curing";
	int port = csrv_port(argc, argv);
	int n = cpus();
	struct loop *loops = calloc((size_t)n, sizeof *loops);
	pthread_barrier_t ready;
	if (loops == NULL)
		die("calloc");
	pthread_barrier_init(&ready, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		struct loop *l = &loops[i];
		l->lfd = listener(port);
		l->ready = &ready;
		int rc = pthread_create(&l->th, NULL, run, l);
		if (rc != 0) {
			errno = rc;
			die("pthread_create");
		}
	}
	pthread_barrier_wait(&ready);
	csrv_serve(port);
}
