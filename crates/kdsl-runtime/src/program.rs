//! Loaded programs and their kernels; a launch gives an [`Event`] (`event.rs`).

use crate::args::{Argument, ArgumentKind, ArgumentLayout, ScalarValue};
use crate::backend::{KernelBackend, ModuleBackend};
use crate::device::Device;
use crate::error::{Result, RuntimeError};
use crate::event::Event;
use crate::launch::Launch;
use crate::queue::{Queue, QueueRef};
use crate::tensor_maps::TensorMapSource;
use kdsl_bundle::{Bundle, Image, KernelInfo};
use std::fmt;
use std::sync::Arc;

/// A bundle's image loaded on one device instance.
pub struct Program {
    device: Device,
    source_name: String,
    image: String,
    /// Whether the image runs matrix-group statements on matrix units ([`Image::matrix_groups`]).
    matrix_groups_on_units: bool,
    /// Whole sub-groups of this size that its tiles need ([`Image::tile_sub_group_size`]).
    tile_sub_group_size: Option<u32>,
    /// The entry points whose tile copies read through tensor maps ([`Image::tensor_maps`]).
    tensor_maps: Vec<kdsl_bundle::EntryTensorMaps>,
    kernels: Vec<KernelInfo>,
    entry_point_prefix: String,
    module: Arc<dyn ModuleBackend>,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("source", &self.source_name)
            .field("image", &self.image)
            .field("device", &self.device.label())
            .finish()
    }
}

impl Program {
    pub(crate) fn new(
        device: Device,
        bundle: &Bundle,
        image: &Image,
        module: Arc<dyn ModuleBackend>,
    ) -> Program {
        Program {
            device,
            source_name: bundle.source_name.clone(),
            image: image.describe(),
            matrix_groups_on_units: image.matrix_groups,
            tile_sub_group_size: image.tile_sub_group_size,
            tensor_maps: image.tensor_maps.clone(),
            kernels: bundle.kernels.clone(),
            entry_point_prefix: bundle.entry_point_prefix.clone(),
            module,
        }
    }

    fn entry_point(&self, name: &str) -> String {
        format!("{}{name}", self.entry_point_prefix)
    }

    /// The image that was loaded: `spirv`, `ptx:sm_90`, `amdgpu:gfx90a`.
    pub fn image(&self) -> &str {
        &self.image
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    pub fn kernel_names(&self) -> Vec<String> {
        self.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// The kernel named `name`; an error listing the bundle's kernels if there is none.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let info = self
            .kernels
            .iter()
            .find(|k| k.name == name)
            .ok_or_else(|| RuntimeError::KernelNotFound {
                name: name.to_string(),
                available: self.kernel_names(),
            })?;
        let backend = Arc::clone(&self.module).kernel(name, &self.entry_point(name))?;
        // Only a kernel with multi-dimensional buffers has strides to choose by.
        let innermost_strides: Vec<usize> = info.innermost_strides().collect();
        let contiguous = match &info.contiguous_entry {
            Some(entry) if !innermost_strides.is_empty() => {
                self.contiguous_entry(info, entry, innermost_strides)?
            }
            _ => None,
        };
        Ok(Kernel {
            device: self.device.clone(),
            layout: ArgumentLayout::new(info),
            info: info.clone(),
            source_name: self.source_name.clone(),
            image: self.image.clone(),
            matrix_groups_on_units: self.matrix_groups_on_units,
            tile_sub_group_size: self.tile_sub_group_size,
            backend,
            contiguous,
        })
    }
}

impl Program {
    /// The contiguous entry `entry` of kernel `info`; `None` where it takes tensor maps that
    /// this backend cannot make (the kernel's own entry then takes every launch).
    fn contiguous_entry(
        &self,
        info: &KernelInfo,
        entry: &str,
        innermost_strides: Vec<usize>,
    ) -> Result<Option<ContiguousEntry>> {
        let maps = self
            .tensor_maps
            .iter()
            .find(|maps| maps.entry == *entry)
            .map_or(&[][..], |maps| &maps.maps);
        let entry_point = self.entry_point(entry);
        if maps.is_empty() {
            return Ok(Some(ContiguousEntry {
                backend: Arc::clone(&self.module).kernel(entry, &entry_point)?,
                innermost_strides,
                tensor_maps: Vec::new(),
            }));
        }
        let sources = maps
            .iter()
            .map(|map| TensorMapSource::resolve(info, map))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| RuntimeError::InvalidImage {
                image: self.image.clone(),
                why: format!("a tensor map of `{entry}` names no 2-D buffer"),
            })?;
        let backend = Arc::clone(&self.module).kernel_with_tensor_maps(
            entry,
            &entry_point,
            sources.clone(),
        )?;
        Ok(backend.map(|backend| ContiguousEntry {
            backend,
            innermost_strides,
            tensor_maps: sources,
        }))
    }
}

/// One kernel of a loaded program, ready to launch.
pub struct Kernel {
    pub(crate) device: Device,
    pub(crate) info: KernelInfo,
    /// The parameters as the per-launch checks compare them.
    pub(crate) layout: ArgumentLayout,
    /// The source file the bundle was compiled from, to name a checked kernel's faults.
    pub(crate) source_name: String,
    /// The image it runs (`ptx:sm_90a`) and whether that image runs matrix-group statements
    /// on matrix units, which decides the work-groups they accept.
    pub(crate) image: String,
    pub(crate) matrix_groups_on_units: bool,
    /// Whole sub-groups of this size that the image's tiles need, if any.
    pub(crate) tile_sub_group_size: Option<u32>,
    pub(crate) backend: Box<dyn KernelBackend>,
    /// The kernel's entry point for contiguous arrays, where the bundle names one.
    pub(crate) contiguous: Option<ContiguousEntry>,
}

/// A kernel's second entry point ([`KernelInfo::contiguous_entry`]): a copy compiled with
/// every innermost stride 1, which a launch takes when its innermost stride arguments are 1.
pub(crate) struct ContiguousEntry {
    pub(crate) backend: Box<dyn KernelBackend>,
    /// The arguments that hold the innermost strides.
    pub(crate) innermost_strides: Vec<usize>,
    /// The tensor maps it takes after its arguments, which the backend makes at launch.
    pub(crate) tensor_maps: Vec<TensorMapSource>,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.info.name)
            .field("device", &self.device.label())
            .finish()
    }
}

impl Kernel {
    /// The entry point a launch with `arguments` runs: the contiguous entry when the kernel
    /// has one and every innermost stride argument is 1, the kernel's own otherwise (which
    /// takes any strides). A few comparisons per launch.
    pub(crate) fn entry_for(&self, arguments: &[Argument<'_>]) -> &dyn KernelBackend {
        match &self.contiguous {
            Some(contiguous)
                if contiguous.innermost_strides.iter().all(|&index| {
                    matches!(
                        arguments.get(index).map(|argument| &argument.kind),
                        Some(ArgumentKind::Scalar(ScalarValue::U64(1)))
                    )
                }) && contiguous.tensor_maps.iter().all(|map| {
                    map.layout(arguments)
                        .is_some_and(|layout| layout.describable())
                }) =>
            {
                &*contiguous.backend
            }
            _ => &*self.backend,
        }
    }

    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The kernel's metadata from the bundle: its parameters and local memory.
    pub fn info(&self) -> &KernelInfo {
        &self.info
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// For a kernel of a SYCL device: the `sycl::kernel` inside, valid while this kernel lives
    /// (for handing to another SYCL library, which copies it: dpctl's `SyclKernel_Make`). None
    /// on other backends.
    pub fn sycl_kernel(&self) -> Result<Option<*const std::ffi::c_void>> {
        Ok(self
            .backend
            .sycl_kernel_address()?
            .map(|address| address as *const std::ffi::c_void))
    }

    /// Checks the arguments and the launch against the kernel's metadata and the device's
    /// limits, then submits the launch to the device's default queue. Does not block; a misuse
    /// error submits nothing, so the queue stays usable.
    pub fn launch(&self, launch: &Launch, arguments: &[Argument<'_>]) -> Result<Event> {
        QueueRef::default_of(&self.device).launch(self, launch, arguments, &[])
    }

    /// Like [`Kernel::launch`], on `queue` (of the kernel's device instance), after the events
    /// in `wait_for`.
    pub fn launch_on(
        &self,
        queue: &Queue,
        launch: &Launch,
        arguments: &[Argument<'_>],
        wait_for: &[&Event],
    ) -> Result<Event> {
        queue.launch(self, launch, arguments, wait_for)
    }
}
