/*
 * csrv.h is what the suite's C reference servers (cepoll, curing) share:
 * the command line, the SO_REUSEPORT listeners, the count of CPUs and
 * the wait for the end of stdin. Each server includes it once, as
 * "../csrv/csrv.h", and sets csrv_name first.
 */
#ifndef CSRV_H
#define CSRV_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* csrv_name prefixes the messages on stderr. */
static const char *csrv_name = "csrv";

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", csrv_name, what, strerror(errno));
	exit(1);
}

/* csrv_port returns the port of the command line "NAME PORT", or prints
 * the usage and exits. It also ignores SIGPIPE. */
static int csrv_port(int argc, char **argv)
{
	if (argc != 2 || atoi(argv[1]) <= 0 || atoi(argv[1]) > 65535) {
		fprintf(stderr, "usage: %s PORT\n", csrv_name);
		exit(2);
	}
	signal(SIGPIPE, SIG_IGN);
	return atoi(argv[1]);
}

/* listener opens a nonblocking SO_REUSEPORT socket listening on
 * 127.0.0.1:port. */
static int listener(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	int one = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0)
		die("setsockopt");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0)
		die("bind");
	if (listen(fd, SOMAXCONN) < 0)
		die("listen");
	return fd;
}

/* cpus counts the CPUs this process may run on. */
static int cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* csrv_serve prints "127.0.0.1:PORT" on stdout, the only thing a server
 * prints there, once every socket listens, then exits when stdin reaches
 * end of file, which is how the suite stops it. */
static void __attribute__((noreturn)) csrv_serve(int port)
{
	printf("127.0.0.1:%d\n", port);
	fflush(stdout);

	/* stdin may come nonblocking from the parent. */
	int fl = fcntl(0, F_GETFL);
	if (fl >= 0)
		fcntl(0, F_SETFL, fl & ~O_NONBLOCK);
	char b[256];
	for (;;) {
		ssize_t r = read(0, b, sizeof b);
		if (r == 0 || (r < 0 && errno != EINTR))
			_exit(0);
	}
}

#endif
