//! Fuzz target `pcap_read`: see `nicsim_core::fuzz::pcap_read` for the input and the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nicsim_core::fuzz::pcap_read(data));
