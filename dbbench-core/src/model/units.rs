//! Allocation units shared by every backend, chosen to match SQL Server's.

/// A page: 8 KiB, as in SQL Server (the embedded engine uses `PRAGMA page_size = 8192`).
pub const PAGE: u64 = 8 * 1024;

/// An extent: eight pages, the unit in which data files are allocated.
pub const EXTENT: u64 = 8 * PAGE;

/// One mebibyte.
pub const MIB: u64 = 1024 * 1024;

/// `bytes` for messages, in the binary units SQL Server calls KB, MB, GB, TB: `37.2 GB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod format_tests {
    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(super::format_bytes(512), "512 bytes");
        assert_eq!(super::format_bytes(8 * super::MIB), "8.0 MB");
        assert_eq!(super::format_bytes(1 << 40), "1.0 TB");
        assert_eq!(super::format_bytes(1 << 50), "1024.0 TB");
    }
}
