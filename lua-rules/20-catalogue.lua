-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 20-catalogue.lua - name the tool a process runs and give it a category.
--
-- Conventions (see README.md):
--   * d.tool is the catalogue's canonical name ("bowtie2" for
--     bowtie2-align-s, "python" for python3.11); d.version comes only from
--     what the command line shows: a versioned name (python3.11, gcc-12), a
--     versioned folder in the exe or script path (/opt/samtools-1.17/...,
--     /opt/conda/pkgs/bwa-0.7.17-h5bf99c6_8/...) or a jar name
--     (picard-2.27.5.jar).  A subcommand never goes into tool or version
--     (argv has it); only gatk's category depends on its subcommand, and
--     the cloud CLIs': `aws batch ...`, `aws ecs run-task`, `gcloud batch
--     ...`, `az batch ...` are scheduler-helper, a client that hands work
--     to a scheduler (never a workflow task's process: README,
--     "Rightsizing"), like sbatch, qsub and bsub.
--   * Interpreters name what they run: `java -jar picard.jar SortSam` ->
--     picard, `python3 -m multiqc .` -> multiqc, `perl /usr/bin/fastqc` ->
--     fastqc, `python -m torch.distributed.run ...` -> torchrun.  A script
--     not in the catalogue is named by its base name with category
--     "script" (`python train.py` -> train.py, `bash run.sh` -> run.sh); an
--     unknown module or main class by its dotted name, an unknown jar by its
--     name without version.  Inline code (`sh -c ...`, `python -c ...`,
--     `perl -e ...`) leaves the interpreter's own name, except R/Python code
--     that loads a catalogued package (Rscript -e 'library(Seurat) ...').
--   * Wrappers that exec in place (env, nice, nohup, stdbuf, setsid,
--     ionice, chrt, taskset, numactl, busybox applets) are named after the
--     command they exec: they become that process a moment later.  Wrappers
--     that start the command as a child (time, timeout, xargs, sudo, srun,
--     mpirun, conda run, singularity exec, docker run) keep their own name:
--     the child gets its own classification.
--   * Unknown programs keep the engine's default (exe base name) and an
--     empty category.

local byte, sub, find, match, lower, gmatch = string.byte, string.sub,
	string.find, string.match, string.lower, string.gmatch
local tools, lookup, basename, scan, cut = lib.tools, lib.lookup, lib.basename,
	lib.scan, lib.cut
local add, alias, pkg, set = lib.add, lib.alias, lib.pkg, lib.set
local version_from_path = lib.version_from_path
local O = lib.opts
local MAX_TOOL, MAX_VERSION = lib.MAX_TOOL, lib.MAX_VERSION

---------------------------------------------------------------------------
-- The catalogue.  lib.add(category, canonical names...); lib.alias(canon,
-- other names...); lib.pkg(canon, folder names for the version search).

add("aligner", "bwa", "bwa-mem2", "bowtie", "bowtie2", "minimap2", "STAR",
	"hisat2", "subread-align", "subjunc", "bbmap", "blasr", "pbmm2", "ngmlr",
	"novoalign", "tophat2", "lastal", "vg", "dragen", "winnowmap", "bismark",
	"bsmap", "GraphAligner", "mm2-fast")
alias("bwa-mem2", "bwa-mem2.avx2", "bwa-mem2.avx512bw", "bwa-mem2.avx",
	"bwa-mem2.sse41", "bwa-mem2.sse42")
alias("bowtie", "bowtie-align-s", "bowtie-align-l", "bowtie-build",
	"bowtie-build-s", "bowtie-build-l")
alias("bowtie2", "bowtie2-align-s", "bowtie2-align-l", "bowtie2-build",
	"bowtie2-build-s", "bowtie2-build-l", "bowtie2-inspect")
alias("hisat2", "hisat2-align-s", "hisat2-align-l", "hisat2-build",
	"hisat2-build-s", "hisat2-build-l")
alias("STAR", "STARlong")
alias("bbmap", "bbmap.sh")
alias("bismark", "bismark_genome_preparation", "bismark_methylation_extractor")
alias("tophat2", "tophat")
alias("lastal", "lastdb")
pkg("subread-align", "subread")
pkg("subjunc", "subread")
pkg("lastal", "last")

add("variant-caller", "gatk", "freebayes", "deepvariant", "strelka", "VarScan",
	"manta", "delly", "lofreq", "octopus", "platypus", "vardict", "clair3",
	"sniffles", "cnvkit", "glnexus", "longshot", "smoove", "lumpy", "gridss",
	"svaba", "pbsv", "cuteSV", "tiddit", "whatshap")
alias("gatk", "gatk-package", "GenomeAnalysisTK", "gatk3", "gatk4")
alias("deepvariant", "run_deepvariant", "run_deepvariant.py", "make_examples",
	"call_variants", "postprocess_variants")
alias("strelka", "strelka2", "configureStrelkaGermlineWorkflow.py",
	"configureStrelkaSomaticWorkflow.py")
alias("manta", "configManta.py")
alias("vardict", "vardict-java", "VarDict")
alias("clair3", "run_clair3.sh")
alias("cnvkit", "cnvkit.py")
alias("glnexus", "glnexus_cli")
alias("freebayes", "freebayes-parallel")
alias("lumpy", "lumpyexpress")
alias("gridss", "gridss.sh")
pkg("strelka", "strelka2", "strelka")

add("qc", "fastqc", "multiqc", "trimmomatic", "cutadapt", "fastp", "trim_galore",
	"qualimap", "mosdepth", "rseqc", "NanoPlot", "NanoStat", "fastq_screen",
	"preseq", "bbduk", "verifybamid", "somalier", "falco", "quast", "busco",
	"checkm", "filtlong", "porechop", "sortmerna", "rnaseqc", "kat", "nanoq")
alias("rseqc", "read_distribution.py", "infer_experiment.py",
	"geneBody_coverage.py", "bam_stat.py", "inner_distance.py",
	"junction_annotation.py", "read_duplication.py", "tin.py")
alias("bbduk", "bbduk.sh")
alias("verifybamid", "VerifyBamID", "verifybamid2")
alias("quast", "quast.py", "metaquast.py", "metaquast")
alias("busco", "run_BUSCO.py")
alias("checkm", "checkm2")
alias("trimmomatic", "TrimmomaticPE", "TrimmomaticSE")
alias("qualimap", "qualimap_v2")

add("assembler", "spades", "megahit", "flye", "canu", "hifiasm", "velvet",
	"Trinity", "abyss", "shasta", "wtdbg2", "raven", "miniasm", "unicycler",
	"masurca", "verkko", "racon", "medaka", "pilon")
alias("spades", "spades.py", "metaspades.py", "rnaspades.py",
	"plasmidspades.py", "spades-core", "spades-hammer")
alias("megahit", "megahit_core")
alias("velvet", "velveth", "velvetg")
alias("abyss", "abyss-pe", "ABYSS", "ABYSS-P")
alias("wtdbg2", "wtpoa-cns", "wtdbg-cns")
alias("medaka", "medaka_consensus", "medaka_haploid_variant")
alias("unicycler", "unicycler_polish")

add("quantifier", "salmon", "kallisto", "featureCounts", "htseq-count", "rsem",
	"stringtie", "cufflinks", "bustools", "alevin-fry", "simpleaf", "DESeq2")
alias("rsem", "rsem-calculate-expression", "rsem-prepare-reference",
	"rsem-run-em", "rsem-parse-alignments")
alias("cufflinks", "cuffdiff", "cuffmerge", "cuffquant")
pkg("featureCounts", "subread")

add("annotation", "prokka", "bakta", "snpEff", "SnpSift", "vep", "annovar",
	"interproscan", "augustus", "maker", "eggnog-mapper", "braker", "barrnap",
	"tRNAscan-SE", "liftoff", "funannotate", "gffread")
alias("vep", "variant_effect_predictor.pl")
alias("annovar", "table_annovar.pl", "annotate_variation.pl",
	"convert2annovar.pl")
alias("interproscan", "interproscan.sh")
alias("eggnog-mapper", "emapper.py")
alias("braker", "braker.pl")
pkg("vep", "ensembl-vep")

add("alignment-utils", "samtools", "bcftools", "tabix", "htsfile", "picard",
	"bedtools", "deeptools", "sambamba", "samblaster", "biobambam", "vcftools",
	"bedops", "bedGraphToBigWig", "bedToBigBed", "bigWigToBedGraph",
	"liftOver", "fgbio", "umi_tools", "seqkit", "seqtk", "bamtools", "vt",
	"jvarkit", "gencore")
alias("picard", "picard-tools", "PicardCommandLine")
alias("deeptools", "bamCoverage", "bamCompare", "computeMatrix", "plotHeatmap",
	"plotProfile", "multiBamSummary", "multiBigwigSummary", "plotFingerprint",
	"plotCorrelation", "plotPCA", "bigwigCompare", "computeGCBias",
	"alignmentSieve")
alias("biobambam", "bamsormadup", "bammarkduplicates", "bammarkduplicates2",
	"bamsort", "bammerge")
alias("bedops", "sort-bed", "bedmap", "bedextract", "convert2bed")
alias("bedtools", "intersectBed", "coverageBed", "genomeCoverageBed",
	"bamToBed", "mergeBed", "sortBed")
pkg("tabix", "htslib")
pkg("htsfile", "htslib")
pkg("picard", "picard-slim")

add("peak-caller", "macs2", "macs3", "homer", "Genrich", "SEACR", "epic2")
alias("homer", "findPeaks", "annotatePeaks.pl", "findMotifsGenome.pl",
	"makeTagDirectory", "findMotifs.pl", "makeUCSCfile")
alias("SEACR", "SEACR_1.3.sh", "SEACR.sh")

add("sequence-search", "blastn", "blastp", "blastx", "tblastn", "tblastx",
	"makeblastdb", "psiblast", "rpsblast", "blastdbcmd", "diamond", "hmmscan",
	"hmmsearch", "hmmbuild", "hmmpress", "jackhmmer", "phmmer", "nhmmer",
	"mmseqs", "kraken2", "bracken", "centrifuge", "kaiju", "metaphlan",
	"mash", "sourmash", "cmscan", "blat", "vsearch", "cd-hit")
for _, b in ipairs { "blastn", "blastp", "blastx", "tblastn", "tblastx",
	"makeblastdb", "psiblast", "rpsblast", "blastdbcmd" } do
	pkg(b, "ncbi-blast", "blast")
end
for _, h in ipairs { "hmmscan", "hmmsearch", "hmmbuild", "hmmpress",
	"jackhmmer", "phmmer", "nhmmer" } do
	pkg(h, "hmmer")
end
alias("kraken2", "kraken2-build")
alias("cd-hit", "cd-hit-est", "cd-hit-2d")
alias("cmscan", "cmsearch")
pkg("cmscan", "infernal")

add("phylogenetics", "mafft", "muscle", "clustalo", "iqtree", "raxml",
	"FastTree", "mrbayes", "trimal", "prank", "beast", "gubbins", "treetime",
	"codeml")
alias("mafft", "mafft-linsi", "mafft-ginsi", "mafft-einsi", "linsi", "ginsi",
	"einsi", "disttbfast", "tbfast", "dvtditr", "pairlocalalign", "mafft-profile")
alias("iqtree", "iqtree2", "iqtree3")
alias("raxml", "raxml-ng", "raxmlHPC", "raxmlHPC-PTHREADS",
	"raxmlHPC-PTHREADS-AVX", "raxmlHPC-PTHREADS-AVX2", "raxmlHPC-PTHREADS-SSE3",
	"raxmlHPC-AVX", "raxmlHPC-AVX2", "raxmlHPC-SSE3", "raxmlHPC-MPI-AVX2")
alias("FastTree", "FastTreeMP")
alias("mrbayes", "mb", "mb-mpi")
alias("clustalo", "clustal-omega")
alias("gubbins", "run_gubbins.py")
pkg("codeml", "paml")

add("genetics", "plink", "plink2", "regenie", "bolt", "beagle", "shapeit4",
	"eagle", "impute5", "minimac4", "gcta64", "admixture", "ldsc")
alias("ldsc", "ldsc.py")
alias("gcta64", "gcta")

add("single-cell", "cellranger", "STARsolo", "seurat", "scanpy", "velocyto",
	"spaceranger", "cellranger-arc", "cellranger-atac")
tools.STARsolo.vkeys = tools.STAR.vkeys

add("workflow-engine", "nextflow", "snakemake", "cwltool", "toil-cwl-runner",
	"toil", "cromwell", "miniwdl", "womtool", "cwl-runner", "arvados-cwl-runner",
	"martian", "luigi", "airflow", "bpipe", "papermill")
alias("toil", "_toil_worker", "toil-wdl-runner")
alias("martian", "mrp", "mrjob")

add("scheduler-helper", "sbatch", "srun", "scontrol", "squeue", "sacct",
	"salloc", "sinfo", "scancel", "sstat", "sattach", "sbcast", "slurmstepd",
	"sprio", "sshare", "qsub", "qstat", "qdel", "qalter", "qrsh", "bsub",
	"bjobs", "bkill", "flux", "condor_submit", "condor_q", "condor_rm",
	"condor_wait", "oarsub", "oarstat", "oardel")

add("ml-launcher", "torchrun", "deepspeed", "accelerate", "horovodrun", "ray",
	"composer", "colossalai")

add("ml-framework", "tensorboard", "wandb", "mlflow", "huggingface-cli", "vllm",
	"tritonserver", "fairseq-train", "transformers-cli", "ollama", "llama-server")

add("gpu-utility", "nvidia-smi", "dcgmi", "nvtop", "nsys", "ncu", "rocm-smi",
	"nvidia-cuda-mps-control", "gpustat")
alias("ncu", "nv-nsight-cu-cli")

add("launcher", "mpirun", "mpiexec", "orted", "hydra_pmi_proxy", "parallel",
	"charmrun", "pdsh", "clush")
alias("mpirun", "orterun", "prterun")
alias("mpiexec", "mpiexec.hydra")
alias("orted", "prted")
pkg("mpirun", "openmpi")
pkg("mpiexec", "mpich", "openmpi")

add("interpreter", "python", "perl", "ruby", "Rscript", "R", "julia", "node",
	"octave", "lua", "php", "tclsh", "ipython", "jupyter", "pypy", "ipykernel",
	"groovy")
alias("python", "python3", "python2")
alias("node", "nodejs")
alias("octave", "octave-cli")
alias("ipython", "ipython3")
alias("pypy", "pypy3")
alias("jupyter", "jupyter-lab", "jupyter-notebook", "jupyter-server",
	"jupyter-nbconvert", "jupyter-execute", "jupyter-kernel")
for _, n in ipairs { "python", "perl", "ruby", "lua", "php", "tclsh", "pypy",
	"ipython", "julia", "node" } do
	tools[n].vsplit = true
end

add("language-runtime", "java", "matlab", "dotnet", "mono", "scala")
alias("java", "javaw")
pkg("java", "jdk", "jre", "openjdk", "temurin", "graalvm")
pkg("matlab", "R20")

add("compression", "gzip", "gunzip", "zcat", "pigz", "unpigz", "bgzip", "zstd",
	"unzstd", "zstdcat", "pzstd", "xz", "unxz", "xzcat", "pixz", "bzip2",
	"bunzip2", "bzcat", "pbzip2", "lbzip2", "lz4", "zip", "unzip", "tar", "7z")
alias("zstd", "zstdmt")
alias("7z", "7za", "7zz")
pkg("bgzip", "htslib")

add("sort-utility", "sort", "gsort")

add("text-utility", "cat", "awk", "gawk", "mawk", "sed", "grep", "egrep",
	"fgrep", "zgrep", "cut", "paste", "join", "head", "tail", "tr", "wc", "uniq",
	"tee", "jq", "yq", "column", "split", "comm", "diff", "rg", "echo", "printf",
	"expr", "xxd", "od", "strings", "tac", "rev", "nl", "fold", "shuf")

add("transfer", "rsync", "scp", "sftp", "aws", "gsutil", "gcloud", "rclone",
	"wget", "curl", "azcopy", "s3cmd", "s5cmd", "globus-url-copy", "ascp",
	"prefetch", "fasterq-dump", "fastq-dump", "lftp", "gdc-client", "iget",
	"iput", "az", "git-lfs")
pkg("aws", "aws-cli/v2", "awscli")
for _, s in ipairs { "prefetch", "fasterq-dump", "fastq-dump" } do
	pkg(s, "sratoolkit", "sra-tools")
end

add("container-runtime", "singularity", "apptainer", "docker", "podman",
	"enroot", "ch-run", "shifter", "crun", "udocker", "nvidia-container-cli")
alias("apptainer", "starter", "starter-suid")
alias("nvidia-container-cli", "nvidia-container-runtime-hook",
	"nvidia-container-runtime")

add("package-manager", "conda", "mamba", "micromamba", "pip", "uv", "spack",
	"lmod", "modulecmd", "npm", "cpanm", "pixi")
alias("pip", "pip3")
tools.pip.vsplit = true
alias("npm", "npm-cli.js")

add("build", "make", "cmake", "ctest", "gcc", "g++", "cc", "c++", "clang",
	"clang++", "gfortran", "cpp", "ld", "as", "cc1", "cc1plus", "f951",
	"collect2", "lto-wrapper", "nvcc", "ptxas", "ninja", "cargo", "rustc", "go",
	"mvn", "gradle", "autoconf", "automake", "configure", "meson", "libtool",
	"ar", "git", "eb", "bazel", "ccache", "pytest")
alias("make", "gmake")
alias("ld", "ld.bfd", "ld.gold", "ld.lld", "lld", "mold")
alias("gfortran", "f95")
for _, n in ipairs { "gcc", "g++", "cc", "c++", "clang", "clang++", "gfortran",
	"cpp", "cmake", "ctest", "ld", "as", "go" } do
	tools[n].vsplit = true
end
pkg("nvcc", "cuda")
pkg("gcc", "gcc-toolset", "gcccore")

add("shell", "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "csh", "tcsh",
	"fish", "busybox")

add("system-utility", "env", "nice", "nohup", "timeout", "time", "stdbuf",
	"taskset", "numactl", "ionice", "chrt", "setsid", "xargs", "sudo", "su",
	"hostname", "date", "sleep", "mkdir", "rm", "cp", "mv", "ln", "ls", "find",
	"du", "df", "chmod", "chown", "touch", "stat", "realpath", "dirname",
	"basename", "which", "ps", "kill", "free", "uptime", "md5sum", "sha256sum",
	"sha1sum", "id", "uname", "whoami", "tty", "test", "[", "true", "false",
	"printenv", "seq", "readlink", "mktemp", "install", "ssh", "systemd-run",
	"flock", "watch", "tmux", "screen", "lscpu", "nproc", "getconf", "dd", "sync",
	"tput", "locale", "dircolors", "lesspipe", "mesg", "run-parts")

add("database-client", "mysql", "psql", "sqlite3", "mongosh", "mongo",
	"redis-cli", "mariadb", "mysqldump", "pg_dump", "duckdb", "sqlcmd")

---------------------------------------------------------------------------
-- Modules (python -m), main classes (java CLASS) and inline code.

local modules = {
	["torch.distributed.run"] = "torchrun",
	["torch.distributed.launch"] = "torchrun",
	["deepspeed.launcher.runner"] = "deepspeed",
	["deepspeed.launcher.launch"] = "deepspeed",
	["accelerate.commands.launch"] = "accelerate",
	["accelerate.commands.accelerate_cli"] = "accelerate",
	["horovod.runner.launch"] = "horovodrun",
	["colossalai.cli"] = "colossalai",
	["multiqc"] = "multiqc",
	["snakemake"] = "snakemake",
	["cutadapt"] = "cutadapt",
	["pip"] = "pip",
	["conda"] = "conda",
	["cwltool"] = "cwltool",
	["toil.worker"] = "toil",
	["toil.cwl.cwltoil"] = "toil-cwl-runner",
	["WDL"] = "miniwdl",
	["jupyter"] = "jupyter",
	["notebook"] = "jupyter",
	["jupyterlab"] = "jupyter",
	["nbconvert"] = "jupyter",
	["ipykernel_launcher"] = "ipykernel",
	["ipykernel"] = "ipykernel",
	["papermill"] = "papermill",
	["tensorboard"] = "tensorboard",
	["tensorboard.main"] = "tensorboard",
	["vllm.entrypoints.openai.api_server"] = "vllm",
	["vllm.entrypoints.api_server"] = "vllm",
	["mlflow"] = "mlflow",
	["wandb"] = "wandb",
	["scanpy"] = "scanpy",
	["macs2"] = "macs2",
	["macs3"] = "macs3",
	["HTSeq.scripts.count"] = "htseq-count",
	["luigi"] = "luigi",
	["airflow"] = "airflow",
	["fairseq_cli.train"] = "fairseq-train",
	["pytest"] = "pytest",
	["ray.scripts.scripts"] = "ray",
	["velocyto"] = "velocyto",
	["cnvkit"] = "cnvkit",
	["NanoPlot"] = "NanoPlot",
}
lib.modules = modules

-- main class or a dotted prefix of it -> tool
local classes = {
	["picard"] = "picard",
	["net.sf.picard"] = "picard",
	["org.broadinstitute.hellbender"] = "gatk",
	["org.broadinstitute.gatk"] = "gatk",
	["org.broadinstitute.sting"] = "gatk",
	["uk.ac.babraham.FastQC"] = "fastqc",
	["org.usadellab.trimmomatic"] = "trimmomatic",
	["nextflow"] = "nextflow",
	["cromwell"] = "cromwell",
	["womtool"] = "womtool",
	["org.snpeff"] = "snpEff",
	["ca.mcgill.mcb.pcingola.snpEffect"] = "snpEff",
	["org.snpsift"] = "SnpSift",
	["com.fulcrumgenomics"] = "fgbio",
	["com.github.lindenb.jvarkit"] = "jvarkit",
	["org.bioinfo.ngs.qc.qualimap"] = "qualimap",
	["align2.BBMap"] = "bbmap",
	["align2.BBMapPacBio"] = "bbmap",
	["jgi.BBDuk"] = "bbduk",
	["net.sf.varscan"] = "VarScan",
	["org.broadinstitute.pilon"] = "pilon",
	["org.codehaus.plexus.classworlds"] = "mvn",
	["org.gradle"] = "gradle",
	["beast.app"] = "beast",
	["dr.app.beast"] = "beast",
}
lib.classes = classes

local py_inline = { { "scanpy", "scanpy" } }
local r_inline = { { "Seurat", "seurat" }, { "DESeq2", "DESeq2" } }
lib.py_inline, lib.r_inline = py_inline, r_inline

-- gatk tools that call or filter variants; any other gatk tool is
-- "alignment-utils" (MarkDuplicates, BaseRecalibrator, SortSam, ...)
local gatk_calling = set { "HaplotypeCaller", "Mutect2", "GenotypeGVCFs",
	"CombineGVCFs", "GenomicsDBImport", "FilterMutectCalls", "VariantRecalibrator",
	"ApplyVQSR", "VariantFiltration", "CNNScoreVariants", "FilterVariantTranches",
	"GermlineCNVCaller", "DetermineGermlineContigPloidy", "CallCopyRatioSegments",
	"ModelSegments", "UnifiedGenotyper", "HaplotypeCallerSpark",
	"GnarlyGenotyper", "ReblockGVCF", "JointGermlineCNVSegmentation",
	"PostprocessGermlineCNVCalls", "MuTect2", "Funcotator" }
lib.gatk_calling = gatk_calling

---------------------------------------------------------------------------
-- Classification.

-- Name d after entry e; v is a version from the name, else the path's.
local function apply(d, e, path, v)
	d.tool = e.name
	d.category = e.cat
	if v == nil then v = version_from_path(path, e) end
	if v ~= nil and #v <= MAX_VERSION then d.version = v end
end
lib.apply = apply

local classify_at

-- argv[k] is a script or program started by an interpreter or wrapper.
-- What a path names is remembered (pipelines run the same scripts again
-- and again): { e = entry, v = version } or { name = base name } when the
-- catalogue does not know it.
local script_info, script_info_t = lib.memo(function(path)
	local name = basename(path)
	local e, v = lookup(name)
	if e == nil then return { name = cut(name, MAX_TOOL) } end
	if v == nil then v = version_from_path(path, e) end
	if v and #v > MAX_VERSION then v = nil end
	return { e = e, v = v }
end)

local function payload(argv, k, d, depth, unknown_cat)
	local path = argv[k]
	local si = script_info_t[path]
	if si == nil then si = script_info(path) end
	local e = si.e
	if e == nil then
		if si.name == "" then return false end	-- "/", "//": no name
		d.tool = si.name
		d.category = unknown_cat
		d.version = ""
	elseif e.fn and depth < 6 then
		e.fn(argv, k, path, d, e, si.v, depth + 1)
	else
		d.tool = e.name
		d.category = e.cat
		d.version = si.v or ""
	end
end

-- Inline code: a catalogued package it loads names it, else the
-- interpreter keeps its name.
local function inline(code, list, d, e, path, v)
	if code then
		for k = 1, #list do
			local it = list[k]
			if find(code, it[1], 1, true) then
				apply(d, tools[it[2]], nil, nil)
				return
			end
		end
	end
	apply(d, e, path, v)
end

-- python -m MOD
local function module(mod, d)
	local t = modules[mod]
	if t == nil then
		local first = match(mod, "^[^%.]+")
		t = modules[first]
	end
	if t then
		apply(d, tools[t], nil, nil)
	else
		d.tool = cut(mod, MAX_TOOL)
		d.category = "script"
		d.version = ""
	end
end

-- An interpreter: spec for lib.scan, inline-code package list.
local function interp(spec, list)
	return function(argv, i, path, d, e, v, depth)
		local pos, stop, val, mark = scan(argv, i + 1, spec)
		if stop == nil then
			local a = argv[pos]
			if mark == nil and a ~= nil and a ~= "-" and a ~= ""
				and payload(argv, pos, d, depth, "script") ~= false then
				return
			end
		elseif stop == "m" and val then
			return module(val, d)
		elseif stop == "f" and val and basename(val) ~= "" then	-- R -f FILE
			d.tool = cut(basename(val), MAX_TOOL)
			d.category = "script"
			d.version = ""
			return
		elseif list then			-- -c / -e CODE
			return inline(val, list, d, e, path, v)
		end
		apply(d, e, path, v)
	end
end

-- A wrapper that execs the command in place; npos positional arguments
-- (taskset's mask, chrt's priority) come before the command.
local function command(argv, k, d, depth)
	local a = argv[k]
	local name = basename(a)
	if name == "" then return false end
	local path = find(a, "/", 1, true) and a or nil
	if classify_at(argv, k, path, name, d, depth) then return end
	d.tool = cut(name, MAX_TOOL)
	d.category = ""
	d.version = ""
	return true
end

local function wrapper(spec, npos)
	return function(argv, i, path, d, e, v, depth)
		local pos, stop = scan(argv, i + 1, spec)
		if stop == nil then
			pos = pos + (npos or 0)
			if pos <= #argv and command(argv, pos, d, depth) ~= false then return end
		end
		apply(d, e, path, v)
	end
end

-- java: -jar JAR, -m MOD/CLASS, or a main class.
local function java_class(argv, k, cls, d, depth)
	local t = classes[cls]
	if t == nil then
		local q = 0
		for _ = 1, 6 do
			q = find(cls, ".", q + 1, true)
			if q == nil then break end
			t = classes[sub(cls, 1, q - 1)]
			if t then break end
		end
	end
	if t == nil then
		d.tool = cut(cls, MAX_TOOL)
		d.category = "script"
		d.version = ""
		return
	end
	local e = tools[t]
	-- a version from the class path (-cp /opt/fastqc-0.12.1/...)
	local cp
	for q = 2, k - 1 do
		local a = argv[q]
		if a == "-cp" or a == "-classpath" or a == "--class-path" then
			cp = argv[q + 1]
		end
	end
	if e.fn then
		e.fn(argv, k, cp, d, e, nil, depth)
	else
		apply(d, e, cp, nil)
	end
end

-- What a jar path names: { e = entry or nil, name = tool if unknown,
-- v = version or nil }; remembered per path.
local jar_info, jar_info_t = lib.memo(function(jar)
	local b = basename(jar)
	local nm = match(b, "^(.+)%.[jJ][aA][rR]$") or b
	local e, v = tools[nm] or tools[lower(nm)], nil
	local base
	if e == nil then
		base, v = lib.split_jar_version(nm)
		if base then e = tools[base] or tools[lower(base)] end
	end
	if v and #v > MAX_VERSION then v = nil end
	if e and v == nil and not (e.fn and e.jar_ok) then
		v = version_from_path(jar, e)
	end
	return { e = e, v = v, name = cut(base or nm, MAX_TOOL) }
end)

local function java_jar(argv, k, jar, d, depth)
	local ji = jar_info_t[jar]
	if ji == nil then ji = jar_info(jar) end
	local e = ji.e
	if e == nil then
		d.tool = ji.name
		d.category = "script"
		d.version = ji.v or ""
		return
	end
	if e.fn and e.jar_ok then
		e.fn(argv, k, jar, d, e, ji.v, depth)
	else
		d.tool = e.name
		d.category = e.cat
		if ji.v then d.version = ji.v end
	end
end

local function java(argv, i, path, d, e, v, depth)
	local pos, stop, val = scan(argv, i + 1, O.java)
	if stop == "jar" and val and basename(val) ~= "" then
		return java_jar(argv, pos - 1, val, d, depth)
	elseif stop == "module" and val and val ~= "" then
		return java_class(argv, pos - 1, match(val, "/(.+)$") or val, d, depth)
	elseif stop == nil and pos <= #argv and argv[pos] ~= "" then
		return java_class(argv, pos, argv[pos], d, depth)
	end
	apply(d, e, path, v)
end

-- env [-i] [-u NAME] [-C DIR] [-S 'cmd args'] [NAME=VALUE]... CMD
local function env(argv, i, path, d, e, v, depth)
	local n = #argv
	local k = i + 1
	while k <= n do
		local a = argv[k]
		if byte(a, 1) == 45 then
			if a == "--" then k = k + 1 break end
			local split
			if a == "-S" or a == "--split-string" then
				split = argv[k + 1]
				k = k + 2
			elseif sub(a, 1, 2) == "-S" then
				split = sub(a, 3)
				k = k + 1
			elseif sub(a, 1, 15) == "--split-string=" then
				split = sub(a, 16)
				k = k + 1
			end
			if split then
				local t = {}
				for w in gmatch(split, "%S+") do t[#t + 1] = w end
				for q = k, n do t[#t + 1] = argv[q] end
				if #t == 0 then break end
				return env(t, 0, nil, d, e, v, depth)
			end
			if a == "-u" or a == "-C" or a == "--unset" or a == "--chdir" then
				k = k + 2
			else
				k = k + 1
			end
		elseif find(a, "=", 1, true) then
			k = k + 1
		else
			break
		end
	end
	if k <= n and command(argv, k, d, depth) ~= false then return end
	apply(d, e, path, v)
end

-- busybox APPLET ... (argv[1] is the applet name when called via a link)
local function busybox(argv, i, path, d, e, v, depth)
	local k = i
	local a0 = argv[k]
	if a0 == nil or basename(a0) == "busybox" then k = k + 1 end
	local a = argv[k]
	local name = a and basename(a) or ""
	if name == "" then return apply(d, e, path, v) end
	if name ~= "busybox" and classify_at(argv, k, nil, name, d, depth) then
		return
	end
	d.tool = cut(name, MAX_TOOL)
	d.category = "system-utility"
end

-- R [options] [-f FILE | --file=FILE | CMD BATCH FILE]
local r_interp = interp(O.r, r_inline)
local function rhandler(argv, i, path, d, e, v, depth)
	local pos, stop = scan(argv, i + 1, O.r)
	if stop == nil and argv[pos] == "CMD" then
		if argv[pos + 1] == "BATCH" then
			local q = lib.first_operand(argv, pos + 2)
			if q and argv[q] and payload(argv, q, d, depth, "script") ~= false then
				return
			end
		end
		return apply(d, e, path, v)
	end
	if stop == nil then return apply(d, e, path, v) end	-- R reads stdin
	return r_interp(argv, i, path, d, e, v, depth)
end

-- gatk [--java-options OPTS] TOOL ...; GATK3: java -jar GATK.jar -T TOOL
local gatk_wrapper_opts = set { "--java-options", "--spark-runner",
	"--spark-master", "--conf", "--spark-submit-command" }
local function gatk(argv, i, path, d, e, v, depth)
	apply(d, e, path, v)
	local n = #argv
	local tool
	local k = i + 1
	while k <= n do
		local a = argv[k]
		if a == "-T" or a == "--analysis_type" then
			tool = argv[k + 1]
			break
		elseif gatk_wrapper_opts[a] then
			k = k + 2
		elseif byte(a, 1) == 45 then
			-- GATK3 puts -R ref.fa before -T: look further for -T
			k = k + 1
		else
			tool = a
			local t = lib.has(argv, "-T", k + 1)
			if t then tool = argv[t + 1] end
			break
		end
	end
	if tool and gatk_calling[tool] then d.category = "variant-caller"
	else d.category = "alignment-utils" end
end

-- aws/gcloud/az [global options] SERVICE ...: the batch services hand
-- work to a scheduler; their options' values are skipped
local cloud_opts = set { "--profile", "--region", "--output", "--endpoint-url",
	"--query", "--ca-bundle", "--cli-read-timeout", "--cli-connect-timeout",
	"--color", "--cli-binary-format", "--project", "--account",
	"--configuration", "--subscription", "--format", "--verbosity" }
local cloud_batch = set { "batch", "ecs" }
local function cloud_cli(argv, i, path, d, e, v, depth)
	apply(d, e, path, v)
	local k = i + 1
	while k <= #argv do
		local a = argv[k]
		if cloud_opts[a] then
			k = k + 2
		elseif byte(a, 1) == 45 then
			k = k + 1
		else
			if cloud_batch[a] then d.category = "scheduler-helper" end
			return
		end
	end
end

-- STAR --soloType ... is STARsolo
local function star(argv, i, path, d, e, v, depth)
	for k = i + 1, #argv do
		local a = argv[k]
		if byte(a, 1) == 45 and byte(a, 3) == 115 and sub(a, 1, 6) == "--solo" then
			return apply(d, tools.STARsolo, path, v)
		end
	end
	apply(d, e, path, v)
end

classify_at = function(argv, i, path, name, d, depth)
	local e, v = lookup(name)
	if e == nil then return false end
	local fn = e.fn
	if fn and depth < 6 then
		fn(argv, i, path, d, e, v, depth + 1)
	else
		apply(d, e, path, v)
	end
	return true
end
lib.classify_at = classify_at

-- handlers
local py = interp(O.python, py_inline)
tools.python.fn = py
tools.pypy.fn = py
tools.ipython.fn = py
tools.perl.fn = interp(O.perl)
tools.ruby.fn = interp(O.ruby)
tools.Rscript.fn = interp(O.rscript, r_inline)
tools.R.fn = rhandler
tools.julia.fn = interp(O.julia)
tools.node.fn = interp(O.node)
tools.octave.fn = interp(O.octave)
local shell = interp(O.shell)
for _, s in ipairs { "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash" } do
	tools[s].fn = shell
end
tools.java.fn = java
tools.env.fn = env
tools.busybox.fn = busybox
tools.nice.fn = wrapper { sa = set { "n" }, la = set { "--adjustment" } }
tools.nohup.fn = wrapper {}
tools.stdbuf.fn = wrapper { sa = set { "i", "o", "e" },
	la = set { "--input", "--output", "--error" } }
tools.setsid.fn = wrapper {}
tools.ionice.fn = wrapper { sa = set { "c", "n" }, ss = { p = "p", P = "p", u = "p" },
	la = set { "--class", "--classdata" } }
tools.chrt.fn = wrapper({ sa = set { "T", "P", "D" }, ss = { p = "p" },
	la = set { "--sched-runtime", "--sched-period", "--sched-deadline" } }, 1)
tools.taskset.fn = wrapper({ ss = { p = "p" } }, 1)
tools.numactl.fn = wrapper { sa = set { "N", "m", "C", "i", "p", "P", "w" },
	ss = { s = "s", H = "s" },
	la = set { "--interleave", "--membind", "--cpunodebind", "--physcpubind",
		"--preferred", "--preferred-many", "--weighted-interleave" } }
tools.gatk.fn = gatk
tools.gatk.jar_ok = true
tools.STAR.fn = star
for _, n in ipairs { "aws", "gcloud", "az" } do tools[n].fn = cloud_cli end

-- base name of argv[1] without a login shell's "-" ("-bash" -> "bash")
local argv0_name = lib.memo(function(a1)
	local b = basename(a1)
	if byte(b, 1) == 45 then b = sub(b, 2) end
	return b
end)

jobtrace.rule("catalogue", function(p, d)
	local info = lib.info(p)
	local e = info.e
	if e == nil then
		-- first exec of this program: look it up once
		local v
		e, v = lookup(info.name)
		if e and v == nil then v = version_from_path(info.path, e) end
		if v and #v > MAX_VERSION then v = nil end
		info.e = e or false
		info.v = v or false
	end
	if e then
		if e.fn == nil then
			d.tool = e.name
			d.category = e.cat
			local v = info.v
			if v then d.version = v end
		else
			e.fn(p.argv, 1, info.path, d, e, info.v or nil, 1)
		end
		return
	end
	-- the exe is not catalogued (a script run through its #! line, an
	-- unknown path): try what argv[1] names
	local argv = p.argv
	local a1 = argv[1]
	if a1 == nil or a1 == "" then return end
	local b = argv0_name(a1)
	if b ~= info.name then
		classify_at(argv, 1, find(a1, "/", 1, true) and a1 or nil, b, d, 0)
	end
end)

jobtrace.selftest { argv = { "/opt/conda/pkgs/bwa-0.7.17-h5bf99c6_8/bin/bwa",
	"mem", "-t", "8", "ref.fa", "r1.fq" },
	expect = { tool = "bwa", category = "aligner", version = "0.7.17" } }
jobtrace.selftest { argv = { "java", "-Xmx8g", "-jar", "/opt/picard-2.27.5.jar",
	"SortSam", "I=in.bam", "O=out.bam" },
	expect = { tool = "picard", category = "alignment-utils", version = "2.27.5" } }
jobtrace.selftest { argv = { "/opt/gatk-4.4.0.0/gatk", "--java-options", "-Xmx4g",
	"Mutect2", "-R", "ref.fa" },
	expect = { tool = "gatk", category = "variant-caller", version = "4.4.0.0" } }
jobtrace.selftest { argv = { "python3", "-u", "-X", "dev", "-m", "multiqc", "." },
	expect = { tool = "multiqc", category = "qc" } }
jobtrace.selftest { argv = { "python", "-m", "torch.distributed.run",
	"--nproc_per_node", "8", "train.py" },
	expect = { tool = "torchrun", category = "ml-launcher" } }
jobtrace.selftest { argv = { "/usr/bin/env", "python3", "x.py" },
	expect = { tool = "x.py", category = "script" } }
jobtrace.selftest { argv = { "bash", "-euo", "pipefail", "run.sh" },
	expect = { tool = "run.sh", category = "script" } }
jobtrace.selftest { argv = { "sh", "-c", "bwa mem ref.fa r.fq | samtools sort" },
	expect = { tool = "sh", category = "shell" } }
jobtrace.selftest { argv = { "perl", "-w", "/usr/bin/fastqc", "r1.fq" },
	expect = { tool = "fastqc", category = "qc" } }
