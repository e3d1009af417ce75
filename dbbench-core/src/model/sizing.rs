//! The sizes a cell actually uses: the storage configuration with its sizes multiplied by the
//! scale when the benchmark asks for `scale_storage`, and the effective sizes recorded with the
//! results.

use crate::model::config::{Growth, Size, StorageSpec};
use crate::model::scale::Scale;
use std::collections::BTreeMap;

impl StorageSpec {
    /// This configuration with every size scaled when `scale_storage` is set (percent growth is
    /// unchanged).
    pub fn scaled(&self, scale_storage: bool, scale: &Scale) -> StorageSpec {
        let spec = self;
        if !scale_storage {
            return *spec;
        }
        let size = |s: Option<Size>| s.map(|s| Size::new(scale.size(s.bytes), s.text));
        let growth = |g: Option<Growth>| {
            g.map(|g| match g {
                Growth::Fixed(s) => Growth::Fixed(Size::new(scale.size(s.bytes), s.text)),
                other => other,
            })
        };
        StorageSpec {
            data_size: size(spec.data_size),
            growth: growth(spec.growth),
            log_size: size(spec.log_size),
            log_growth: growth(spec.log_growth),
            log_pregrow: size(spec.log_pregrow),
            tempdb_size: size(spec.tempdb_size),
            tempdb_growth: growth(spec.tempdb_growth),
            ..*spec
        }
    }

    /// The byte sizes of this configuration, named `<option>_bytes`.
    pub fn effective_sizes(&self) -> BTreeMap<String, u64> {
        let spec = self;
        let mut out = BTreeMap::new();
        let mut put = |name: &str, bytes: Option<u64>| {
            if let Some(b) = bytes {
                out.insert(format!("{name}_bytes"), b);
            }
        };
        let fixed = |g: Option<Growth>| match g {
            Some(Growth::Fixed(s)) => Some(s.bytes),
            _ => None,
        };
        put("data_size", spec.data_size.map(|s| s.bytes));
        put("growth", fixed(spec.growth));
        put("log_size", spec.log_size.map(|s| s.bytes));
        put("log_growth", fixed(spec.log_growth));
        put("log_pregrow", spec.log_pregrow.map(|s| s.bytes));
        put("tempdb_size", spec.tempdb_size.map(|s| s.bytes));
        put("tempdb_growth", fixed(spec.tempdb_growth));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_sizes_only_when_asked() {
        let spec = StorageSpec {
            growth: Some(Growth::Fixed(Size::new(1 << 30, "1024MB"))),
            log_growth: Some(Growth::Percent(10)),
            log_size: Some(Size::new(32000 << 20, "32000MB")),
            ..StorageSpec::DEFAULT
        };
        let scale = Scale::default_scale();
        assert_eq!(spec.scaled(false, &scale), spec);
        let scaled = spec.scaled(true, &scale);
        assert_eq!(
            scaled.growth,
            Some(Growth::Fixed(Size::new(64 << 20, "1024MB")))
        );
        assert_eq!(scaled.log_growth, Some(Growth::Percent(10)));
        assert_eq!(scaled.effective_sizes()["log_size_bytes"], 2000 << 20);
    }
}
