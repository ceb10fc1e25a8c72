//! The socket lock's counters on a timed host (`cpu.socket_backlog`): how
//! often the backlog, the spin for the socket's spinlock and a read's loop
//! after the backlog came into play (`timed.rs`, `backlog.rs`).

use serde::Serialize;

/// What the socket lock did (`cpu.socket_backlog`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SocketLockStats {
    /// Segments the softirq queued to the backlog because a call held the
    /// socket (joined ones included).
    pub backlogged: u64,
    /// Calls that spun for the socket's spinlock while the softirq on
    /// another core ran TCP input (`cpu.lock_spin`).
    pub spins: u64,
    /// Cycles they spun, on the application's core (in its lock layer).
    pub spin_cycles: u64,
    /// Times a read went on after the backlog without a new system call
    /// (`cpu.read_after_backlog`).
    pub reads_continued: u64,
}
