//! Packet traces in the classic pcap format with nanosecond timestamps
//! (magic `a1b23c4d`), Ethernet link type, little-endian on every machine
//! so traces are byte-identical everywhere. A frame is stamped with the
//! simulated time its first bit goes on the wire.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::engine::Time;
use crate::error::Error;

/// A pcap file being written.
pub struct Trace {
    path: PathBuf,
    writer: PcapWriter<BufWriter<File>>,
}

impl Trace {
    /// Create (or truncate) a trace file at `path`.
    pub fn create(path: &Path) -> Result<Trace, Error> {
        let file = File::create(path).map_err(|e| Error::io(path.display(), e))?;
        let header = PcapHeader {
            snaplen: 65535,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..Default::default()
        };
        let writer = PcapWriter::with_header(BufWriter::with_capacity(1 << 20, file), header)
            .map_err(|e| Error::io(path.display(), e))?;
        Ok(Trace { path: path.to_path_buf(), writer })
    }

    /// Record `frame` at simulated time `at`.
    pub fn record(&mut self, at: Time, frame: &[u8]) -> Result<(), Error> {
        let ts = std::time::Duration::from_nanos(at.ps() / crate::engine::time::PS_PER_NS);
        self.writer
            .write_packet(&PcapPacket::new(ts, frame.len() as u32, frame))
            .map(|_| ())
            .map_err(|e| Error::io(self.path.display(), e))
    }

    /// Flush and close; returns the path written.
    pub fn finish(self) -> Result<PathBuf, Error> {
        let path = self.path;
        self.writer.into_writer().flush().map_err(|e| Error::io(path.display(), e))?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_nanosecond_little_endian_ethernet_pcap() {
        let dir = std::env::temp_dir().join(format!("nicsim-pcap-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.pcap");
        let mut t = Trace::create(&path).unwrap();
        t.record(Time(1_500_000_123_456), &[0xaa; 60]).unwrap();
        t.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        // Global header: nanosecond magic, v2.4, snaplen 65535, linktype 1.
        assert_eq!(bytes[..4], [0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(bytes[4..8], [2, 0, 4, 0]);
        assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 1);
        // Record header: 1 s and 500000123 ns, 60 bytes captured and on the wire.
        let rec = &bytes[24..40];
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(rec[4..8].try_into().unwrap()), 500_000_123);
        assert_eq!(u32::from_le_bytes(rec[8..12].try_into().unwrap()), 60);
        assert_eq!(bytes.len(), 24 + 16 + 60);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
