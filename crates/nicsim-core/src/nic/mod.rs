//! NIC-side frame processing: what a network interface does to the bytes
//! of a frame (the timing of rings, DMA and interrupts is in
//! `sim::timed`). One file per engine.

pub mod tso;
