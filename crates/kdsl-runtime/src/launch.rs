//! Launch geometry and its checks.

use crate::error::{Result, RuntimeError};
use kdsl_bundle::KernelInfo;

/// The global and work-group (local) sizes of a launch, in 1 to 3 dimensions.
///
/// Dimension 0 is the fastest-varying one: `get_global_id(0)` runs along it, as in OpenCL and
/// CUDA's `x`. (SYCL orders ranges the other way; the SYCL backend reverses them.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    dimensions: usize,
    global: [u64; 3],
    local: [u64; 3],
    /// Made by [`Launch::global_only`]: the work-group size is left to the runtime and device.
    local_left_open: bool,
}

impl Launch {
    /// `Launch::new([n], [256])`, `Launch::new([width, height], [16, 16])`. `D` is 1, 2 or 3
    /// (anything else does not compile).
    pub fn new<const D: usize>(global: [usize; D], local: [usize; D]) -> Launch {
        const { assert!(D >= 1 && D <= 3, "a launch has 1, 2 or 3 dimensions") };
        let mut launch = Launch {
            dimensions: D,
            global: [1; 3],
            local: [1; 3],
            local_left_open: false,
        };
        for dimension in 0..D {
            launch.global[dimension] = global[dimension] as u64;
            launch.local[dimension] = local[dimension] as u64;
        }
        launch
    }

    /// A launch of exactly `global` work-items whose work-group size is not given: a kernel
    /// with `#[work_group_size(...)]` gets that size; on SYCL devices the SYCL runtime and
    /// driver choose (`parallel_for(range)`, no `nd_range`), so the global size need not be a
    /// multiple of anything; on CUDA the block size of the driver's occupancy calculation
    /// (`cuOccupancyMaxPotentialBlockSize`) bounds the work-group, on HIP 256 does, and each
    /// dimension gets the largest divisor of its global size within that bound (dimension 0
    /// up to 32 in 2-D and 3-D launches, dimension 1 up to 8 in 3-D ones). Kernels that rely on
    /// a particular work-group size (local arrays sized for it, barriers over it) should state
    /// it. Kernels that use local memory get the largest power of two up to 256 (1-D), 16
    /// (2-D) or 8 (3-D) that divides each dimension, on every device, as their local arrays
    /// are usually sized for such a group. Kernels whose image runs matrix groups on matrix
    /// units get a multiple of 128 work-items.
    pub fn global_only<const D: usize>(global: [usize; D]) -> Launch {
        let mut launch = Launch::new(global, [1; D]);
        launch.local_left_open = true;
        launch
    }

    /// Whether the work-group size was left open ([`Launch::global_only`]).
    pub fn local_left_open(&self) -> bool {
        self.local_left_open
    }

    /// This launch with the work-group size of an open launch chosen, where the device does
    /// not choose it itself (`device_chooses`: SYCL devices): the size the kernel requires; for
    /// a kernel using local memory (fixed or sized at launch) the largest power of two up to
    /// 256 (1-D), 16 (2-D) or 8 (3-D) dividing each dimension, on every device; else
    /// per dimension the largest divisor of the global size within `budget` work-items in all
    /// (the driver's occupancy choice on CUDA, else 256) and the device's per-dimension limits;
    /// dimension 0 first, up to 32 (a warp) when there are more dimensions, then dimension 1 up
    /// to 8 when there are three. A launch with a size is returned as it is.
    pub(crate) fn with_local_chosen(
        &self,
        kernel: &KernelInfo,
        device_chooses: bool,
        budget: u64,
        limits: &DeviceLimits,
    ) -> Launch {
        if !self.local_left_open {
            return *self;
        }
        let mut chosen = *self;
        if let Some(required) = kernel.work_group_size {
            for (local, &size) in chosen.local.iter_mut().zip(&required).take(self.dimensions) {
                *local = u64::from(size);
            }
            chosen.local_left_open = false;
        } else if kernel.local_memory_bytes > 0
            || kernel
                .parameters
                .iter()
                .any(crate::local_memory::is_local_parameter)
        {
            // Local arrays are usually sized for a power-of-two group: such kernels keep the
            // choice kdsl made before the device or occupancy chose (16 x 16 in 2-D).
            let choices: &[u64] = match self.dimensions {
                1 => &[256, 128, 64, 32, 16, 8, 4, 2, 1],
                2 => &[16, 8, 4, 2, 1],
                _ => &[8, 4, 2, 1],
            };
            for (local, &global) in chosen
                .local
                .iter_mut()
                .zip(&self.global)
                .take(self.dimensions)
            {
                *local = choices
                    .iter()
                    .copied()
                    .find(|&choice| global.is_multiple_of(choice))
                    .unwrap_or(1);
            }
            chosen.local_left_open = false;
        } else if !device_chooses {
            let mut left = budget.clamp(1, limits.max_work_group_size.max(1));
            for dimension in 0..self.dimensions {
                let mut cap = left.min(limits.max_local[dimension]);
                if dimension + 1 < self.dimensions {
                    cap = cap.min(if dimension == 0 { 32 } else { 8 });
                }
                let size = largest_divisor_within(self.global[dimension], cap);
                chosen.local[dimension] = size;
                left = (left / size).max(1);
            }
            chosen.local_left_open = false;
        }
        chosen
    }

    /// This launch (whose work-group size was chosen by [`Launch::with_local_chosen`]) in
    /// work-groups of a multiple of `group` work-items, as matrix groups on matrix units need:
    /// kept where the chosen size is one; else dimension 0 takes the larger of 2 `group` and
    /// `group` that divides its global size (`group` where neither does, which
    /// [`check_launch`] then reports) and the other dimensions 1.
    pub(crate) fn in_whole_groups(mut self, group: u64) -> Launch {
        let items: u64 = self.local.iter().product();
        if items.is_multiple_of(group) {
            return self;
        }
        self.local = [1; 3];
        self.local[0] = [2 * group, group]
            .into_iter()
            .find(|&size| self.global[0].is_multiple_of(size))
            .unwrap_or(group);
        self
    }

    /// A 1-D launch of at least `count` work-items: `count` rounded up to a multiple of `local`.
    pub fn covering(count: usize, local: usize) -> Launch {
        let local = local.max(1);
        Launch::new([count.div_ceil(local).max(1) * local], [local])
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The global sizes of the used dimensions.
    pub fn global(&self) -> &[u64] {
        &self.global[..self.dimensions]
    }

    /// The work-group sizes of the used dimensions (all 1 while left open).
    pub fn local(&self) -> &[u64] {
        &self.local[..self.dimensions]
    }

    /// The number of work-groups in each used dimension (valid after `check_launch`).
    pub fn groups(&self) -> Vec<u64> {
        self.global()
            .iter()
            .zip(self.local())
            .map(|(global, local)| global / local.max(&1))
            .collect()
    }

    /// [`Launch::groups`] in all three dimensions (1 beyond the used ones), without allocating.
    pub(crate) fn group_counts(&self) -> [u64; 3] {
        let mut groups = [1; 3];
        for (dimension, count) in groups.iter_mut().enumerate().take(self.dimensions) {
            *count = self.global[dimension] / self.local[dimension].max(1);
        }
        groups
    }
}

/// The largest divisor of `value` that is at most `cap` (1 for 0).
fn largest_divisor_within(value: u64, cap: u64) -> u64 {
    (1..=cap.min(value).max(1))
        .rev()
        .find(|&candidate| value.is_multiple_of(candidate))
        .unwrap_or(1)
}

/// What a device allows for one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceLimits {
    pub max_work_group_size: u64,
    /// Per-dimension work-group limits (CUDA's 1024 x 1024 x 64); `u64::MAX` where there is none.
    pub max_local: [u64; 3],
    /// Per-dimension limits on the number of work-groups; `u64::MAX` where there is none.
    pub max_groups: [u64; 3],
    pub local_memory_bytes: u64,
    /// The local memory one work-group may have when part of it is sized at launch (CUDA's
    /// opt-in maximum, for which the runtime raises the kernel's dynamic shared memory limit);
    /// elsewhere `local_memory_bytes`.
    pub dynamic_local_memory_bytes: u64,
}

/// The most work-items one launch may have: 2^40. A launch beyond it (a size computed wrongly,
/// such as 2^60) would keep a queue busy for hours to years.
pub const MAX_WORK_ITEMS: u64 = 1 << 40;

/// Checks a launch against the kernel and device: positive sizes, global divisible by local,
/// per-dimension global sizes below 2^31 when the kernel computes ids in 32 bits, the work-group
/// size the kernel requires (`#[work_group_size]`), the work-group and group-count limits, and the
/// kernel's local memory against the device's.
pub(crate) fn check_launch(
    kernel: &KernelInfo,
    launch: &Launch,
    limits: &DeviceLimits,
) -> Result<()> {
    let bad = |why: String| RuntimeError::BadLaunch {
        kernel: kernel.name.clone(),
        why,
    };
    let total = launch
        .global()
        .iter()
        .try_fold(1u64, |total, &size| total.checked_mul(size))
        .filter(|&total| total <= MAX_WORK_ITEMS);
    if total.is_none() {
        return Err(bad(format!(
            "the launch has more than 2^40 (about 1.1e12) work-items ({}); no device finishes that \
             in reasonable time, so split the work into several launches",
            launch
                .global()
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" x ")
        )));
    }
    if launch.local_left_open() {
        // The device chooses the work-group size: only what does not depend on it.
        for (dimension, &global) in launch.global().iter().enumerate() {
            if global == 0 {
                return Err(bad(format!("dimension {dimension} has size 0")));
            }
            if kernel.ids_fit_in_31_bits && global >= 1 << 31 {
                return Err(bad(format!(
                    "the global size {global} of dimension {dimension} is not below 2^31, which this kernel's 32-bit ids require"
                )));
            }
        }
        if kernel.local_memory_bytes > limits.local_memory_bytes {
            return Err(bad(format!(
                "the kernel needs {} bytes of local memory, the device has {}",
                kernel.local_memory_bytes, limits.local_memory_bytes
            )));
        }
        return Ok(());
    }
    for (dimension, (&global, &local)) in launch.global().iter().zip(launch.local()).enumerate() {
        if global == 0 || local == 0 {
            return Err(bad(format!(
                "dimension {dimension} has size 0 (global {global}, local {local})"
            )));
        }
        if global % local != 0 {
            return Err(bad(format!(
                "the global size {global} of dimension {dimension} is not a multiple of the work-group size {local}"
            )));
        }
        if kernel.ids_fit_in_31_bits && global >= 1 << 31 {
            return Err(bad(format!(
                "the global size {global} of dimension {dimension} is not below 2^31, which this kernel's 32-bit ids require"
            )));
        }
        if local > limits.max_local[dimension] {
            return Err(bad(format!(
                "the work-group size {local} of dimension {dimension} exceeds the device's limit {}",
                limits.max_local[dimension]
            )));
        }
        let groups = global / local;
        if groups > limits.max_groups[dimension] {
            return Err(bad(format!(
                "{groups} work-groups in dimension {dimension} exceed the device's limit {}",
                limits.max_groups[dimension]
            )));
        }
    }
    kernel.check_work_group_size(launch.local()).map_err(bad)?;
    let group_size: u64 = launch.local().iter().product();
    if group_size > limits.max_work_group_size {
        return Err(bad(format!(
            "a work-group of {group_size} work-items exceeds the device's limit of {}",
            limits.max_work_group_size
        )));
    }
    if kernel.local_memory_bytes > limits.local_memory_bytes {
        return Err(bad(format!(
            "the kernel needs {} bytes of local memory, the device has {}",
            kernel.local_memory_bytes, limits.local_memory_bytes
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(local_memory_bytes: u64, ids_fit_in_31_bits: bool) -> KernelInfo {
        KernelInfo {
            name: "k".into(),
            parameters: Vec::new(),
            local_memory_bytes,
            ids_fit_in_31_bits,
            wide_buffer_indices: false,
            work_group_size: None,
            ..KernelInfo::default()
        }
    }

    const LIMITS: DeviceLimits = DeviceLimits {
        max_work_group_size: 1024,
        max_local: [1024, 1024, 64],
        max_groups: [u32::MAX as u64, 65535, 65535],
        local_memory_bytes: 48 * 1024,
        dynamic_local_memory_bytes: 48 * 1024,
    };

    fn why(result: Result<()>) -> String {
        match result {
            Err(RuntimeError::BadLaunch { why, .. }) => why,
            other => panic!("expected BadLaunch, got {other:?}"),
        }
    }

    #[test]
    fn chosen_sizes_become_whole_groups_where_asked() {
        // 16 x 16 = 256 is already a multiple of 128; 8 x 8 is not.
        let square = Launch::global_only([64, 64]).with_local_chosen(
            &kernel(1024, true),
            false,
            256,
            &LIMITS,
        );
        assert_eq!(square.local(), &[16, 16]);
        assert_eq!(square.in_whole_groups(128).local(), &[16, 16]);
        let small = Launch::global_only([24, 8]).with_local_chosen(
            &kernel(1024, true),
            false,
            256,
            &LIMITS,
        );
        assert_eq!(small.local(), &[8, 8]);
        assert_eq!(
            Launch::global_only([512, 8]).in_whole_groups(128).local(),
            &[256, 1]
        );
        assert_eq!(
            Launch::global_only([384]).in_whole_groups(128).local(),
            &[128]
        );
        // No multiple of 128 divides 24: 128, which the check then refuses.
        let refused = small.in_whole_groups(128);
        assert_eq!(refused.local(), &[128, 1]);
        assert!(check_launch(&kernel(1024, true), &refused, &LIMITS).is_err());
    }

    #[test]
    fn an_open_work_group_size_is_chosen_unless_the_device_chooses() {
        let open = Launch::global_only([1000, 48]);
        assert!(open.local_left_open());
        let chosen = open.with_local_chosen(&kernel(0, true), false, 256, &LIMITS);
        assert_eq!(
            (chosen.local(), chosen.local_left_open()),
            (&[25, 8][..], false)
        );
        let one =
            Launch::global_only([1000]).with_local_chosen(&kernel(0, true), false, 768, &LIMITS);
        assert_eq!(one.local(), &[500]);
        let prime =
            Launch::global_only([997]).with_local_chosen(&kernel(0, true), false, 256, &LIMITS);
        assert_eq!(prime.local(), &[1]);
        let three = Launch::global_only([64, 64, 64]).with_local_chosen(
            &kernel(0, true),
            false,
            1024,
            &LIMITS,
        );
        assert_eq!(three.local(), &[32, 8, 4]);
        for launch in [chosen, one, prime, three] {
            check_launch(&kernel(0, true), &launch, &LIMITS).unwrap();
        }
        assert_eq!(
            open.with_local_chosen(&kernel(0, true), true, 256, &LIMITS),
            open
        );
        let mut required = kernel(0, true);
        required.work_group_size = Some([8, 4, 1]);
        let chosen = open.with_local_chosen(&required, true, 256, &LIMITS);
        assert_eq!(
            (chosen.local(), chosen.local_left_open()),
            (&[8, 4][..], false)
        );
        // Kernels with local memory keep kdsl's earlier power-of-two choice, SYCL included.
        let tiled = open.with_local_chosen(&kernel(2048, true), true, 768, &LIMITS);
        assert_eq!(
            (tiled.local(), tiled.local_left_open()),
            (&[8, 16][..], false)
        );
        let sized = Launch::new([64], [32]);
        assert_eq!(
            sized.with_local_chosen(&kernel(0, true), false, 256, &LIMITS),
            sized
        );
        // Left to the device: any positive global size is fine, zero is not.
        check_launch(&kernel(0, true), &Launch::global_only([997, 3]), &LIMITS).unwrap();
        assert!(why(check_launch(
            &kernel(0, true),
            &Launch::global_only([0]),
            &LIMITS
        ))
        .contains("size 0"));
    }

    #[test]
    fn accepts_valid_launches() {
        check_launch(&kernel(1024, true), &Launch::new([4096], [256]), &LIMITS).unwrap();
        check_launch(&kernel(0, true), &Launch::new([64, 48], [16, 16]), &LIMITS).unwrap();
        check_launch(
            &kernel(0, true),
            &Launch::new([8, 8, 8], [2, 2, 2]),
            &LIMITS,
        )
        .unwrap();
        assert_eq!(Launch::covering(1000, 256).global(), [1024]);
        assert_eq!(Launch::covering(0, 256).global(), [256]);
        assert_eq!(Launch::new([64, 48], [16, 16]).groups(), [4, 3]);
        assert_eq!(Launch::new([64, 48], [16, 16]).group_counts(), [4, 3, 1]);
        assert_eq!(Launch::new([8, 8, 8], [2, 4, 8]).group_counts(), [4, 2, 1]);
    }

    #[test]
    fn rejects_indivisible_zero_and_oversized_launches() {
        let k = kernel(0, true);
        assert!(
            why(check_launch(&k, &Launch::new([1000], [256]), &LIMITS)).contains("not a multiple")
        );
        assert!(why(check_launch(&k, &Launch::new([0], [1]), &LIMITS)).contains("size 0"));
        assert!(why(check_launch(&k, &Launch::new([1 << 31], [256]), &LIMITS)).contains("2^31"));
        check_launch(&kernel(0, false), &Launch::new([1 << 31], [256]), &LIMITS).unwrap();
        assert!(
            why(check_launch(&k, &Launch::new([64, 64], [64, 32]), &LIMITS))
                .contains("work-group of 2048")
        );
        assert!(why(check_launch(
            &k,
            &Launch::new([128, 128, 128], [1, 1, 128]),
            &LIMITS
        ))
        .contains("limit 64"));
        assert!(
            why(check_launch(&k, &Launch::new([1, 70000], [1, 1]), &LIMITS))
                .contains("70000 work-groups")
        );
        let absurd = Launch::new([1 << 30, 1 << 30, 1 << 0], [256, 1, 1]);
        assert!(why(check_launch(&kernel(0, false), &absurd, &LIMITS)).contains("2^40"));
        let overflowing = Launch::new([1 << 40, 1 << 40, 1 << 40], [1, 1, 1]);
        assert!(why(check_launch(&kernel(0, false), &overflowing, &LIMITS)).contains("2^40"));
        assert!(why(check_launch(
            &kernel(65536, true),
            &Launch::new([256], [256]),
            &LIMITS
        ))
        .contains("local memory"));
    }

    #[test]
    fn rejects_another_work_group_size_than_the_kernel_requires() {
        let required = KernelInfo {
            work_group_size: Some([16, 16, 1]),
            ..kernel(0, true)
        };
        check_launch(&required, &Launch::new([64, 64], [16, 16]), &LIMITS).unwrap();
        assert!(why(check_launch(
            &required,
            &Launch::new([64, 64], [32, 8]),
            &LIMITS
        ))
        .contains("requires work-groups of 16 x 16"));
        assert!(
            why(check_launch(&required, &Launch::new([256], [256]), &LIMITS))
                .contains("the launch uses 256")
        );
    }
}
