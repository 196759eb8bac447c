// Package loop runs gale's event loops. A Loop is one goroutine that owns a
// poller backend, a table of slots for the descriptors it serves, a timer
// heap and a task queue. Everything a Loop owns is touched only by its
// goroutine; other goroutines hand it work with Post.
//
// # Concurrency
//
// Post, Done, Kind and OnLoop are safe from any goroutine; Stop and Err
// too, but not from the loop goroutine, as they wait for it to end. Every
// other method must be called on the loop goroutine, that is from a Task,
// an Owner's Complete, a Timer's callback or the Config.Flush hook.
//
// # Wake-ups
//
// Post wakes a sleeping loop at most once per batch: the first Post after
// the loop went to sleep writes to the backend's wake-up descriptor, later
// ones see the pending signal and skip the system call. A loop that is busy
// is never woken; it finds the tasks before it sleeps again.
package loop
