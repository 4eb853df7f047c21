# SPDX-License-Identifier: Apache-2.0
# qprof plot: the chart style (gnuplot 5.2 or newer).
#
# qprof loads this file at the start of every chart, then the file given with --style, which
# may change any of it: start from a copy of this one. qprof sets these before:
#   qprof_format      'png', 'svg', 'pdf' or 'dumb' (a text chart)
#   qprof_width       pixels (a PDF is qprof_width/96 inches wide), characters for 'dumb'
#   qprof_height      likewise
#   qprof_font_size   points (pixels in SVG) that make the text size qprof laid the chart out for
# and after it: margins, ranges, labels, the key's place, and `set termoption noenhanced`
# (labels from traces are shown as they are).
#
# What the chart refers to:
#   linetype 1-8      the palette: traces of an overlay, processes (--children), GPU devices
#   line style 10     the tree's memory          11 PSS           12 USS
#              13     cgroup usage               14 CPU           15 I/O read     16 I/O write
#              20     largest process's kernel peak (dashed)      21 cgroup peak (dashed)
#              22     sum of VmHWM (dashed)      23 the peak's point
#              24     checkpoints                25 where the command was killed
#              26     the memory limit in force (dashed)
#              27     a fitted trend of the memory (--trend, dashed)
#   the qprof_* variables below.

font_face = 'Sans'

if (qprof_format eq 'png') {
    set terminal pngcairo size qprof_width, qprof_height font sprintf('%s,%g', font_face, qprof_font_size) \
        background rgb '#ffffff' rounded
} else {
    if (qprof_format eq 'svg') {
        set terminal svg size qprof_width, qprof_height font sprintf('%s,%g', font_face, qprof_font_size) \
            background rgb '#ffffff' rounded
    } else {
        if (qprof_format eq 'pdf') {
            set terminal pdfcairo size qprof_width / 96.0, qprof_height / 96.0 \
                font sprintf('%s,%g', font_face, qprof_font_size) rounded
        } else {
            # Characters tell the series apart. ('ansi' would colour them, but maps dark text to
            # black, unreadable on a dark terminal.)
            set terminal dumb size qprof_width, qprof_height mono nofeed
        }
    }
}

# The palette (Tableau 10, distinguishable by most colour-blind readers).
set linetype 1 lc rgb '#4e79a7' lw 2
set linetype 2 lc rgb '#f28e2b' lw 2
set linetype 3 lc rgb '#59a14f' lw 2
set linetype 4 lc rgb '#e15759' lw 2
set linetype 5 lc rgb '#b07aa1' lw 2
set linetype 6 lc rgb '#76b7b2' lw 2
set linetype 7 lc rgb '#9c755f' lw 2
set linetype 8 lc rgb '#edc948' lw 2
set linetype cycle 8

set style line 10 lc rgb '#2f5d8c' lw 2
set style line 11 lc rgb '#1b7837' lw 1.5 dt 4
set style line 12 lc rgb '#762a83' lw 1.5 dt 5
set style line 13 lc rgb '#8c510a' lw 1.5 dt (8, 3)
set style line 14 lc rgb '#e15759' lw 1.5
set style line 15 lc rgb '#4e79a7' lw 1.5
set style line 16 lc rgb '#f28e2b' lw 1.5
set style line 20 lc rgb '#e15759' lw 1.2 dt 2
set style line 21 lc rgb '#b07aa1' lw 1.2 dt 2
set style line 22 lc rgb '#7f7f7f' lw 1.2 dt 3
set style line 23 lc rgb '#c0392b' pt 7 ps 1.3
set style line 24 lc rgb '#8c8c8c' lw 1 dt 2
set style line 25 lc rgb '#c0392b' lw 1.5
set style line 26 lc rgb '#000000' lw 1.2 dt (10, 4)
set style line 27 lc rgb '#d62728' lw 1.5 dt 3
set style line 28 lc rgb '#4d4d4d' lw 1

qprof_line_width = 2          # traces of an overlay, GPU memory of the tree
qprof_thin_width = 1.2        # processes, device use, coloured checkpoints and exact peaks
qprof_point_size = 1.3        # the peak of each trace in an overlay
qprof_fill_alpha = 0.12       # under the tree's memory (one trace)
qprof_band_color0 = '#eaf0f7' # stages, alternating
qprof_band_color1 = '#f1eef6'
qprof_lane_alpha0 = 0.30      # stages of an overlay: bars in each trace's lane, alternating
qprof_lane_alpha1 = 0.16
qprof_text_color = '#333333'  # stage and checkpoint names
qprof_title_color = '#1a1a1a'
qprof_note_color = '#777777'
qprof_exit_color = '#c0392b'
qprof_peak_color = '#c0392b'
qprof_title_scale = 1.25      # font sizes, relative to qprof_font_size
qprof_facet_scale = 1.05
qprof_label_scale = 0.95
qprof_note_scale = 0.85

set border 3 lc rgb '#555555'
set tics nomirror out scale 0.6 textcolor rgb '#444444'
if (qprof_format ne 'dumb') {
    set grid xtics ytics lc rgb '#d4d4d4' lw 0.8 dt 1
}
set key textcolor rgb '#333333' samplen 2.5 spacing 1.15 nobox
set style textbox opaque noborder margins 2, 1
