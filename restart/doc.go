// Package restart gives a server listeners from elsewhere, and lets a new
// process take a running server's listeners over, so that a restart or a
// deploy drops no connection attempt and no request.
//
// # Entry points
//
// [Systemd] and [SystemdNamed] return the listeners of systemd's socket
// activation (sd_listen_fds(3)): descriptors from 3 on, for this process
// (LISTEN_PID), LISTEN_FDS of them, named by LISTEN_FDNAMES.
//
// [Offer] offers a running process's listeners, by name, on a Unix control
// socket; [Take], in a new process started by anyone (a deploy script,
// systemd), receives copies of the listening descriptors (SCM_RIGHTS,
// unix(7)). Both processes then hold the same listening sockets: the
// kernel's accept queue is one, and a connection attempt made while they
// switch waits in it for whichever process accepts, instead of being
// refused. [Listen] returns an inherited listener by name, or a new one
// on a first start.
//
// # A restart without downtime
//
// The new process:
//
//  1. t, err := restart.Take(ctx, path): nobody offering (an error
//     wrapping fs.ErrNotExist or syscall.ECONNREFUSED) means a first
//     start; go on with no inherited listeners.
//  2. ln, err := restart.Listen(t.Listeners, "tcp", ":8080", "http"), for
//     each listener, and serve on them (httpd.Server.Serve).
//  3. t.Ready(): the old process stops offering and will stop accepting.
//  4. h, err := restart.Offer(path, map[string]net.Listener{"http": ln}),
//     for the next restart, and wait for <-h.Taken() (or a signal).
//
// The old process, once <-h.Taken() fires: closes its listeners (its
// copies: the sockets stay open in the new process), calls
// httpd.Server.Shutdown(ctx) to finish the requests in flight and close
// idle keep-alive connections, and exits. WebSocket clients are told to
// reconnect, to the new process, with a close frame 1012 (Service
// Restart): register websocket's Upgrader.Shutdown with the server's
// RegisterOnShutdown.
//
// # Handing the connections over too
//
// A server that closes its idle keep-alive connections at the restart
// makes its clients reconnect (net/http's retry a GET, not a POST, on
// such a connection). Instead, the old process can hand them over: the
// new one calls [Takeover.ReadyWith] in place of Ready, giving it
// httpd.Server.ServeConn; each process sets httpd.Server.HandOff, before
// it serves, to a function calling [Handover.SendConn] on the Handover its
// Offer returns later (kept in an atomic.Pointer), and once taken over
// calls the Handover's Close after its server's Shutdown. Shutdown then gives each idle HTTP/1.x connection in the
// clear, with the bytes it received and did not consume, to the new
// process, where it goes on as a keep-alive connection (a connection
// busy with a request is handed over once its response is written): its
// client never sees the restart. TestRestartUnderLoad's
// listeners-and-conns case replaces a server twice under load with no
// HTTP client's connection ended by a server. TLS connections
// (crypto/tls's state cannot leave the process), HTTP/2 and upgraded
// ones, and those read a PROXY header from (the client's address stays
// behind) are closed, or told to reconnect, as before.
//
// # Concurrency
//
// Every function and method is safe from any goroutine. An offer serves
// one taker at a time; another is refused with [ErrBusy]. Until the taker
// calls Ready, the old process serves as before: a taker that gives up
// (Takeover.Close), dies, or says nothing for two minutes leaves it
// serving and offering, and the next taker may try.
//
// # Errors
//
// Errors name the control socket or descriptor and wrap the cause:
// fs.ErrNotExist or syscall.ECONNREFUSED where nobody offers, [ErrBusy]
// for a hand-over under way (or a live offer at the path Offer wants),
// net.ErrClosed for a Takeover used after Ready or Close, a timeout
// (net.Error) when Take's context ends, errors.ErrUnsupported where the
// platform cannot pass descriptors.
//
// # Limitations
//
// Descriptors pass over Unix sockets (SCM_RIGHTS) on Unix systems only
// (Linux, the BSDs, macOS): on Windows, Offer and Take fail with an error
// wrapping errors.ErrUnsupported, as does an inherited-descriptor
// environment for Systemd. Only stream listeners pass (TCP, Unix; not
// UDP sockets, whose descriptors systemd may also pass: SystemdNamed then
// fails naming the descriptor). At most 253 listeners pass at once
// (Linux's SCM_MAX_FD). Connections a process accepted stay with it,
// unless it hands them over (SendConn): the old process drains them, and
// if a taker dies after accepting, what it accepted is lost (as with any
// crash). Nothing checks that the two
// processes agree on what the listeners are for beyond their names.
// Clients of the old process's keep-alive connections see them closed
// while idle; net/http's Transport retries an idempotent request sent on
// a connection the server closed that way, other clients must reconnect
// themselves. The control socket's file permissions are the umask's: put
// it in a directory only the service's user may write.
package restart
