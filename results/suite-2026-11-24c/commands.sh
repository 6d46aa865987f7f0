set -e
cd /work/main
D=results/suite-2026-11-24c
H=./target/release/harness
echo "start $(date +%s)"
$H calibrate --device host --output-dir $D/calibrations > $D/calibrate-host.log 2>&1
echo "host calib $(date +%s)"
$H calibrate --device opencl --output-dir $D/calibrations > $D/calibrate-opencl.log 2>&1
echo "ocl calib $(date +%s)"
$H validate-suite --device host --calibration $D/calibrations/host-amd-epyc.json --output-dir $D > $D/suite-host.log 2>&1
echo "host suite $(date +%s)"
$H validate-suite --device opencl --calibration $D/calibrations/opencl-pthread-skylake-avx512-amd-epyc.json --output-dir $D > $D/suite-opencl.log 2>&1
echo "ocl suite $(date +%s)"
