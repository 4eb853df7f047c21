# SPDX-License-Identifier: Apache-2.0
# qprof plot: a dark style, for slides and dark pages. Loaded after qprof.gp:
#
#   qprof plot run.dat -o run.png --style plot/dark.gp
#
# It shows what a style can change: the terminal's background, text and grid colours, the
# stage bands, and the colours of the series.

dark_background = '#1e1f24'

if (qprof_format eq 'png') {
    set terminal pngcairo size qprof_width, qprof_height font sprintf('%s,%g', font_face, qprof_font_size) \
        background rgb dark_background rounded
}
if (qprof_format eq 'svg') {
    set terminal svg size qprof_width, qprof_height font sprintf('%s,%g', font_face, qprof_font_size) \
        background rgb dark_background rounded
}
if (qprof_format eq 'pdf') {
    set terminal pdfcairo size qprof_width / 96.0, qprof_height / 96.0 \
        font sprintf('%s,%g', font_face, qprof_font_size) background rgb dark_background rounded
}

set style line 10 lc rgb '#8ab4f8' lw 2
set style line 23 lc rgb '#ff8a80' pt 7 ps 1.3
set style line 24 lc rgb '#80868b' lw 1 dt 2
set style line 28 lc rgb '#bdbdbd' lw 1
qprof_band_color0 = '#262b36'
qprof_band_color1 = '#2b2836'
qprof_fill_alpha = 0.18
qprof_text_color = '#e8eaed'
qprof_title_color = '#ffffff'
qprof_note_color = '#9aa0a6'
qprof_peak_color = '#ff8a80'

set border 3 lc rgb '#9aa0a6'
set tics textcolor rgb '#bdc1c6'
set xlabel textcolor rgb '#bdc1c6'
set ylabel textcolor rgb '#bdc1c6'
set key textcolor rgb '#e8eaed'
if (qprof_format ne 'dumb') {
    set grid xtics ytics lc rgb '#3c4043' lw 0.8 dt 1
}
set style textbox opaque fc rgb dark_background noborder margins 2, 1
