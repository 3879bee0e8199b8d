"""SN101's fix: take the spectral norm off the layer, as for SN101-SN103."""

from snlint.fixes.unwrap_sn import remove_sn

fix = remove_sn
