//! Fuzz target `pcap`: see `nicsim_testkit::fuzz::pcap` for the input and the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nicsim_testkit::fuzz::pcap(data));
