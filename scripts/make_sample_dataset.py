"""Generate the synthetic BEIR-format sample dataset shipped with haystack_irmetrics.

The dataset is a small, fictional "household knowledge base" covering eight
topics (bicycle maintenance, gardening, home networking, cooking, amateur
astronomy, personal finance, first aid and home repair).  All text was written
for this project; nothing is copied from an existing dataset, website or book.

Every topic has a handful of *facets*.  A facet is one concrete question
(the query) plus hand-written sentences that answer it (``ANSWER``) and
sentences that are on-topic but do not answer it (``PARTIAL``).  Documents are
composed from these sentences, from topic-wide sentence templates and from
small topic vocabularies, so that a document and its relevance label are
produced together:

* label 2 (highly relevant): three or four answer sentences of the facet;
* label 1 (partially relevant): exactly one answer sentence plus background;
* label 0 (judged, not relevant): background sentences about the same subject
  without any answer, and the documents from other facets that share the most
  words with the query.

Overview documents built only from topic-wide sentences are left unjudged and
act as distractors.  The generator is deterministic for a given ``--seed`` and
uses only the Python standard library.

Usage::

    python scripts/make_sample_dataset.py [--out DIR] [--seed N]
"""

import argparse
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

SEED = 1729
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "haystack_irmetrics" / "datasets" / "sample"

N_DEV = 6  # queries judged only in qrels/dev.tsv
N_UNJUDGED = 2  # queries that appear in no qrels file at all
N_OVERVIEW_PER_TOPIC = 8  # unjudged distractor documents per topic
N_HARD_NEGATIVES = 2  # word-overlap negatives judged 0 per query

OPENERS = [
    "This note is about {subject}.",
    "Readers write to us about {subject} more often than you might expect.",
    "Here is what we have learned about {subject} over the years.",
    "The following notes cover {subject}.",
    "Questions about {subject} come up regularly.",
]
ANSWER_TITLE_SUFFIXES = ["", "", "", ": a checklist", " (quick guide)"]
PARTIAL_TITLE_PREFIXES = [
    "Notes on",
    "A few words about",
    "Things to know about",
    "Tips on",
    "Some thoughts on",
]
BACKGROUND_TITLE_PREFIXES = [
    "Background:",
    "Understanding",
    "Facts about",
    "An introduction to",
    "Common questions about",
]
OVERVIEW_TITLE_SUFFIXES = [
    "reader questions",
    "a short checklist",
    "spring edition",
    "autumn edition",
    "more tips",
    "second helping",
]
# fmt: off
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "didn't", "do", "does", "for", "from",
    "how", "i", "if", "in", "is", "it", "its", "my", "not", "of", "on", "or", "should", "so", "that",
    "the", "this", "to", "what", "when", "where", "which", "why", "with", "you", "your",
})
# fmt: on

# Hand-written source text.  Format: keyword lines (TOPIC, VOCAB, TITLE,
# GENERAL, FACET, QUERY, SUBJECT, ANSWER, PARTIAL) and "- " items; a line that
# starts with two spaces continues the previous line.  {name} in a GENERAL
# sentence is filled from the topic's VOCAB list of that name.
DATA = """
TOPIC bicycle maintenance
VOCAB part: chain; cassette; rear derailleur; brake calipers; headset; bottom
  bracket; wheel hubs; seatpost clamp
VOCAB tool: set of hex keys; chain checker; pair of tyre levers; torque wrench;
  cable cutter; floor pump with a gauge
TITLE Bicycle care: general tips
TITLE Notes from a home bike workshop
TITLE Keeping a bicycle in good shape
TITLE Everyday bike maintenance habits
TITLE A beginner's bike toolbox
GENERAL
- A short look at the {part} before each ride catches most problems while they
  are still cheap to fix.
- Keep a {tool} in the workshop, because it pays for itself the first time you
  need it.
- Most home mechanics get by with a {tool}, a few rags and a bottle of
  degreaser.
- Work on a clean bike whenever you can, since grit hides cracks and worn
  parts.
- If a job needs a special press or facing tool, a local shop can usually do it
  in a few minutes.
- Write down the date and distance of every service so you can spot parts that
  wear faster than expected.
- Riding in the rain shortens the life of the {part}, so clean and dry the bike
  afterwards.
- A workstand makes most jobs easier, but turning the bike upside down on its
  saddle works in a pinch.
- Torque figures are usually printed next to the bolt or listed in the
  manufacturer's manual.
- Carbon parts need extra care, so never tighten their bolts without a torque
  wrench.
- Creaks and clicks often come from a different place than the one they seem to
  come from.
- A bike that is stored indoors and wiped down after wet rides needs far less
  work overall.

FACET slow_leak
QUERY how do I fix a slow leak in a bicycle tube
SUBJECT slow punctures in bicycle inner tubes
TITLE Finding and patching a slow puncture
TITLE Inner tube repair when air escapes overnight
ANSWER
- Pump the tube up and hold it near your ear or under water; a steady stream of
  small bubbles shows where the air escapes.
- Scuff the rubber around the hole with sandpaper, spread a thin layer of
  vulcanising fluid and wait until it turns dull before pressing on the patch.
- Before refitting the tube, run your fingers carefully around the inside of
  the tyre to find the thorn or glass sliver that caused the puncture.
- A slow leak at the base of the valve usually means the tube is worn out, and
  replacing it is more reliable than patching.
- Presta valve cores can work loose, so tighten the core with a valve tool
  before assuming the tube itself has a hole.
PARTIAL
- A tyre that goes soft over several days is one of the most common complaints
  at any bike shop.
- All tubes lose some air through the rubber, and lightweight latex tubes lose
  it faster than heavy butyl ones.
- Carrying a spare tube and a mini pump means a flat on the road does not have
  to end your ride.

FACET chain_skip
QUERY why does my chain skip when I pedal hard
SUBJECT a chain that jumps under load
TITLE Chain skipping under load: causes and cures
TITLE When the drivetrain slips on climbs
ANSWER
- Chain skipping under load is most often caused by a stretched chain riding up
  on worn cassette teeth.
- Measure wear with a chain checker; at 0.75 percent elongation the chain is
  due for replacement, and beyond that the cassette usually has to go as well.
- A new chain on an old cassette will often jump on the most used cogs, so
  replace both together if the old chain was badly worn.
- A stiff link can also make the chain jump, so back-pedal slowly and watch for
  a link that does not bend smoothly over the jockey wheels.
- If the chain and cogs are fine, check the derailleur hanger for a bend,
  because a misaligned hanger lets the chain sit between two gears.
PARTIAL
- Riders who stand up on steep climbs put far more force through the drivetrain
  than they do seated.
- A chain typically lasts somewhere between two and five thousand kilometres
  depending on weather, lubrication and riding style.
- Mixing chain brands and cassette brands is usually fine as long as the number
  of speeds matches.

FACET brake_squeal
QUERY how can I stop my disc brakes from squealing
SUBJECT noisy disc brakes
TITLE Quieting squealing disc brakes
TITLE Disc brake noise: cleaning, bedding in and alignment
ANSWER
- Squealing disc brakes are usually contaminated, so clean the rotor with
  isopropyl alcohol and a lint-free cloth.
- If oil has soaked into the pads, lightly sand them or replace them, because
  contaminated pads rarely recover fully.
- Bed in new pads with ten to twenty firm stops from moderate speed, without
  locking the wheel.
- Loosen the caliper bolts, squeeze the lever and retighten the bolts while
  holding it, so the caliper centres itself over the rotor.
- Sintered metal pads are noisier than organic ones in wet weather, and
  switching compounds can quiet a persistent squeal.
PARTIAL
- Hydraulic disc brakes give strong, consistent stopping power even in mud and
  rain.
- Brake noise is annoying, but it is not always a sign that braking power has
  dropped.
- Rotors come in several diameters, and larger ones shed heat better on long
  descents.

FACET gear_index
QUERY how do I adjust my rear derailleur so it shifts smoothly
SUBJECT rear derailleur adjustment
TITLE Setting up rear derailleur indexing
TITLE Limit screws, barrel adjusters and clean shifting
ANSWER
- Shift to the smallest cog and set the high limit screw so the upper jockey
  wheel sits directly under that cog.
- Turn the barrel adjuster a quarter turn at a time; anticlockwise helps the
  chain climb to larger cogs and clockwise helps it drop back down.
- Once indexing is right, set the low limit screw so the derailleur cannot push
  the chain past the largest cog into the spokes.
- The B-tension screw sets the gap between the upper jockey wheel and the
  cassette, and a gap that is too small causes noisy, hesitant shifts.
- If adjustment never feels right, replace the gear cable and housing, since
  friction in old cable makes indexing drift.
PARTIAL
- Modern drivetrains with eleven or twelve speeds leave very little room for
  cable stretch.
- A derailleur that was knocked in a fall can look fine while sitting slightly
  out of line.
- Electronic groupsets are adjusted through a button or an app rather than with
  a barrel adjuster.

FACET tyre_pressure
QUERY what tire pressure should I run on a road bike
SUBJECT road bike tyre pressure
TITLE Choosing tyre pressure for road riding
TITLE How hard to pump road tyres
ANSWER
- For a typical 28 millimetre road tyre, most riders end up between 60 and 80
  psi, with heavier riders near the top of that range.
- Wider tyres need less pressure for the same support, so a 32 millimetre tyre
  can run around 10 psi lower than a 25 millimetre one.
- Run the rear tyre a few psi higher than the front, because it carries more of
  your weight.
- Rough roads are often faster at lower pressure, since a tyre that absorbs
  bumps wastes less energy bouncing the rider around.
- Stay within the minimum and maximum values printed on the tyre sidewall and
  on the rim.
PARTIAL
- A floor pump with an accurate gauge is far more reliable than squeezing the
  tyre with your thumb.
- Tubeless tyres are popular because they allow lower pressure with less risk
  of pinch flats.
- Tyres lose pressure over a week or two, so check them before every ride.

FACET wheel_true
QUERY how do I true a wobbly wheel
SUBJECT wheel truing
TITLE Truing a buckled wheel at home
TITLE Spoke tension and a straight rim
ANSWER
- Spin the wheel in the frame and hold a cable tie or pointer near the rim to
  find where it moves sideways.
- To pull the rim to the left, tighten the spokes that run to the left side of
  the hub at the wobble and loosen the right-side spokes slightly.
- Work in quarter turns with a spoke key and check again after every small
  change, because overtightening creates a new wobble.
- Squeeze parallel pairs of spokes together after truing to settle them, then
  check the rim again.
- A wheel that keeps going out of true often has a cracked rim or a broken
  spoke that should be dealt with first.
PARTIAL
- Wheels take a lot of abuse from potholes, kerbs and heavy luggage.
- Even a small wobble can make a rim brake rub on every revolution.
- Wheel building is a craft of its own, and many riders leave it to a
  professional.

TOPIC gardening
VOCAB crop: tomatoes; courgettes; runner beans; lettuce; carrots; peppers;
  potatoes; kale
VOCAB tender: tomatoes; courgettes; runner beans; peppers; squash; cucumbers
VOCAB amend: compost; leaf mould; well rotted manure; composted bark
TITLE Gardening basics for every season
TITLE Notes from the vegetable patch
TITLE Simple habits for a healthy garden
TITLE A beginner's guide to growing food
TITLE Looking after garden soil
GENERAL
- Most vegetables want at least six hours of direct sun a day.
- A thick layer of {amend} improves almost any soil, whether it is heavy clay
  or loose sand.
- Keep a simple notebook of what you planted where, so you can move {crop} to a
  new bed each year.
- Water in the morning so the leaves can dry out before evening.
- Raised beds warm up earlier in spring and drain better than flat ground.
- Walk around the garden every couple of days, because small problems are easy
  to fix when you catch them early.
- Mulching between rows of {crop} keeps the soil moist and cuts down on
  weeding.
- Local frost dates decide when tender plants such as {tender} can safely go
  outside.
- Healthy soil is full of worms, fungi and bacteria that feed plants through
  the season.
- Choose varieties that are known to do well in your region.
- A soil test every few years tells you whether you need lime or extra
  nutrients.
- Hand tools last much longer when you clean them and store them somewhere dry.

FACET tomato_yellow
QUERY why are the lower leaves on my tomato plants turning yellow
SUBJECT yellowing tomato foliage
TITLE Yellow leaves at the bottom of tomato plants
TITLE Diagnosing pale and spotted tomato leaves
ANSWER
- Yellowing that starts on the oldest, lowest tomato leaves is often early
  blight, which shows brown spots with target-like rings.
- Remove affected leaves, water at the base rather than over the foliage, and
  avoid handling the plants while they are wet.
- A general yellowing of lower leaves without spots usually points to a
  shortage of nitrogen, which a balanced feed corrects within a couple of
  weeks.
- Overwatering in heavy soil starves roots of air and also turns the bottom
  leaves pale and limp.
- Staking plants and pruning the lowest leaves keeps foliage off the soil,
  where blight spores splash up during rain.
PARTIAL
- Tomatoes are heavy feeders and need steady moisture throughout the season.
- Blossom end rot shows up on the fruit rather than the leaves and is linked to
  uneven watering.
- Cherry tomatoes usually ripen earlier than large beefsteak types.

FACET compost
QUERY how do I make compost at home quickly
SUBJECT home composting
TITLE Hot composting in a few weeks
TITLE Speeding up a garden compost heap
ANSWER
- Fast compost needs roughly two to three parts brown material, like dry leaves
  or cardboard, to one part green material such as grass clippings and kitchen
  scraps.
- Chop materials into small pieces so microbes have more surface to work on.
- Keep the heap as damp as a wrung-out sponge and turn it every week to let air
  in.
- A pile of at least one cubic metre holds enough heat to reach 55 degrees in
  the middle, which speeds up decomposition considerably.
- With regular turning, a hot heap can produce usable compost in six to eight
  weeks instead of a year.
PARTIAL
- Compost improves soil structure and feeds the organisms that keep plants
  healthy.
- Meat, dairy and oily food scraps attract pests and are best kept out of a
  home bin.
- Finished compost is dark and crumbly and smells like a forest floor.

FACET aphids
QUERY how do I get rid of aphids without chemicals
SUBJECT aphids on garden plants
TITLE Controlling aphids naturally
TITLE Greenfly and blackfly without sprays from the shop
ANSWER
- A strong jet of water knocks most aphids off the stems, and many of them
  never find their way back.
- Spray colonies with a mild solution of soft soap in water, which breaks down
  their soft bodies without harming the plant.
- Ladybirds, lacewings and hoverfly larvae eat huge numbers of aphids, so plant
  flowers like dill and alyssum to attract them.
- Pinch off heavily infested shoot tips and put them in a bag rather than on
  the compost heap.
- Cut back on high-nitrogen fertiliser, because soft, lush growth is exactly
  what aphids prefer.
PARTIAL
- Aphids are small sap-sucking insects that cluster on new shoots and the
  undersides of leaves.
- Ants often farm aphids for their sticky honeydew and will defend them from
  predators.
- Sticky leaves and black sooty mould are common signs that something is
  feeding on a plant.

FACET seed_start
QUERY when should I start vegetable seeds indoors
SUBJECT sowing seeds indoors
TITLE Timing indoor seed sowing
TITLE Raising vegetable seedlings on a windowsill
ANSWER
- Count back from your last expected frost date: tomatoes and peppers are
  usually sown six to eight weeks before it.
- Fast growers like squash and cucumbers only need three or four weeks indoors,
  and starting them earlier leaves them root-bound.
- Seedlings need strong light as soon as they sprout, and a simple LED panel a
  few centimetres above them prevents leggy growth.
- Harden off young plants for about a week, moving them outside for a little
  longer each day before planting them out.
- A heat mat speeds up germination for warmth-loving seeds such as peppers and
  aubergines.
PARTIAL
- Growing from seed gives you access to far more varieties than a garden centre
  offers.
- Seed packets list the days to maturity, which helps when planning the season.
- Root crops like carrots and beetroot generally do better sown straight into
  the ground.

FACET lawn_brown
QUERY why does my lawn have brown patches in summer
SUBJECT brown patches in a lawn
TITLE Brown spots on the lawn in hot weather
TITLE Reviving a patchy summer lawn
ANSWER
- Brown patches in hot weather are often simple drought stress, and a deep soak
  once or twice a week works better than a daily sprinkle.
- Pull on the brown turf; if it lifts like a carpet, grubs are probably eating
  the roots.
- Dog urine causes round patches with a bright green ring around the edge, and
  watering the spot straight away dilutes it.
- Mowing too short in summer scorches the grass, so raise the mower blade to
  leave it at least seven centimetres tall.
- Compacted soil stops water soaking in, and spiking it with a garden fork or a
  hollow-tine aerator helps the roots recover.
PARTIAL
- A dense, healthy lawn needs feeding in spring and autumn.
- Clover and other low plants stay green in dry weather long after the grass
  has faded.
- Lawns in deep shade are usually thin and need a shade-tolerant seed mix.

FACET pruning_roses
QUERY when and how should I prune roses
SUBJECT pruning roses
TITLE Pruning bush and climbing roses
TITLE Rose pruning made simple
ANSWER
- Prune most bush roses in late winter or early spring, just as the buds start
  to swell.
- Cut out dead, damaged and crossing stems first, then shorten the remaining
  canes by about a third.
- Make each cut about half a centimetre above an outward-facing bud, sloping
  away from it so that water runs off.
- Climbing roses flower on side shoots, so tie the main stems horizontally and
  shorten the side shoots to two or three buds.
- Use sharp, clean bypass secateurs, because blunt blades crush stems and
  invite disease.
PARTIAL
- Roses reward generous feeding and a thick mulch in spring.
- Black spot is the most common disease of roses in damp climates.
- Deadheading faded flowers through the summer keeps many roses blooming
  longer.

TOPIC home networking
VOCAB device: laptop; smart TV; games console; desktop PC; streaming box; home
  office computer
VOCAB gear: router; mesh node; network switch; access point; powerline adapter
TITLE Home network basics
TITLE Getting more from your home internet
TITLE A plain guide to routers and wifi
TITLE Household network housekeeping
TITLE Notes on wired and wireless networking
GENERAL
- Most home networks are built around a single router supplied by the internet
  provider.
- Restarting the {gear} fixes a surprising number of problems, but it should
  not be the only thing you try.
- Write down the router's admin address and password somewhere safe before you
  change any settings.
- Keep the firmware on every {gear} up to date, because updates close security
  holes as well as fixing bugs.
- A wired connection is almost always faster and more stable than wireless for
  a {device}.
- The speed your provider advertises is a maximum, not what you will see at
  every moment.
- Giving each {device} a recognisable name makes the router's list of clients
  much easier to read.
- Very old devices can slow the wireless network for everyone if they only
  support old standards.
- Run a speed test on a wired {device} first to see whether the problem is your
  connection or your wireless.
- The 5 GHz band is faster over short distances, while 2.4 GHz reaches further
  through walls.
- Network cables marked Cat 6 handle gigabit speeds comfortably in a home.
- A small uninterruptible power supply keeps the {gear} running through brief
  power cuts.

FACET wifi_slow
QUERY why is my wifi slow in some rooms
SUBJECT weak wireless coverage around the house
TITLE Fixing wireless dead spots
TITLE Better wifi coverage in every room
ANSWER
- Thick walls, floors and especially metal and water, such as radiators and
  fish tanks, absorb wireless signals and create dead spots in the rooms
  furthest from the router.
- Move the router to a central, raised spot in the home instead of leaving it
  on the floor behind the television.
- A mesh wifi system with two or three nodes spreads strong coverage across a large
  or multi-storey house.
- Switch the 2.4 GHz network to a less crowded channel, usually 1, 6 or 11, if
  many neighbouring networks overlap yours.
- If a room is far from the router, a powerline adapter or a cable to a second
  access point works better than a cheap repeater.
PARTIAL
- Wireless speed drops as you move further away from the router.
- Many people notice the problem first when video calls freeze in a back
  bedroom.
- Repeaters are cheap, but each extra hop can halve the available speed.

FACET port_forward
QUERY how do I set up port forwarding on my router
SUBJECT port forwarding
TITLE Opening ports for a game server or camera
TITLE Port forwarding step by step
ANSWER
- Give the target computer a fixed local address, either on the device itself
  or by reserving it in the router's DHCP settings.
- Log in to the router, find the section called port forwarding, virtual server
  or NAT, and create a rule with the external port, the internal port and the
  computer's local address.
- Choose TCP, UDP or both according to what the application's documentation
  says.
- Test from outside your network, for example over mobile data, because many
  routers cannot reach their own public address from inside.
- If it still fails, your provider may use carrier-grade NAT, and you will need
  to ask them for a public IP address.
PARTIAL
- Game servers, security cameras and remote desktop tools often need incoming
  connections.
- Opening a port exposes a service to the whole internet, so keep that software
  patched.
- Universal Plug and Play lets some devices open ports automatically, which is
  convenient but less secure.

FACET wifi_security
QUERY how do I secure my home wifi network
SUBJECT wireless network security
TITLE Locking down a home wireless network
TITLE Wifi passwords, encryption and router settings
ANSWER
- Use WPA3, or WPA2 with AES if some devices are older, and never leave the
  network open or on WEP.
- Pick a long passphrase of several unrelated words that neighbours could not
  guess.
- Change the router's default admin password, which is often printed on a
  sticker or shared by thousands of identical devices.
- Turn off WPS, since its PIN method can be cracked in hours.
- Install router firmware updates promptly and disable remote administration
  unless you really need it.
PARTIAL
- Hiding the network name does very little, because it can still be seen by
  anyone with basic tools.
- Smart home gadgets are often the weakest devices on a network.
- A guest network is a sensible place for visitors and smart plugs.

FACET dns_issue
QUERY what does DNS server not responding mean and how do I fix it
SUBJECT DNS errors
TITLE Troubleshooting a DNS server that does not respond
TITLE When websites will not load but the network looks fine
ANSWER
- The message means your computer reached the network but got no reply when it
  asked for a website name to be translated into an address.
- Restart the router and the computer first, because a stuck DNS relay in the
  router is the most common cause.
- Point the computer or router at a public resolver such as 1.1.1.1 or 9.9.9.9
  to see whether your provider's DNS is at fault.
- Flush the local DNS cache, for example with ipconfig /flushdns on Windows, to
  clear stale entries.
- Security software and VPN clients sometimes intercept DNS, so try disabling
  them briefly as a test.
PARTIAL
- DNS works like a phone book that turns names people remember into numeric
  addresses.
- When DNS fails, web pages do not load even though the network icon says you
  are connected.
- Some providers redirect mistyped addresses to their own search pages.

FACET ethernet_slow
QUERY why is my wired ethernet connection stuck at 100 Mbps
SUBJECT slow wired ethernet links
TITLE Ethernet link speed stuck at 100 megabits
TITLE Getting full gigabit speed over a cable
ANSWER
- A link stuck at 100 Mbps almost always means that two of the four wire pairs
  in the cable are not working.
- Replace the patch cable first, because a crushed cable or a damaged clip on
  the plug is the usual culprit.
- Check that every switch and adapter along the path supports gigabit, since
  one old device limits the whole link.
- In the network adapter settings, set speed and duplex back to automatic
  negotiation if someone fixed them at 100 Mbps.
- If a wall socket is involved, a badly terminated keystone can pass 100 Mbps
  but fail at gigabit.
PARTIAL
- Gigabit ethernet is standard on nearly every modern computer and router.
- Ethernet cables can run up to 100 metres before signal quality suffers.
- Flat cables look tidy but are more easily damaged than round ones.

FACET printer_offline
QUERY why does my wireless printer keep going offline
SUBJECT network printers
TITLE Keeping a wifi printer online
TITLE A printer that disappears from the network
ANSWER
- Printers often lose their address when the router hands out a new one, so
  reserve a fixed IP for the printer in the router's DHCP settings.
- Turn off the printer's deep sleep or power saving mode, which can drop its
  wireless connection.
- Add the printer by its IP address rather than a name discovered
  automatically, so the computer always knows where to find it.
- If the router combines both bands under one name, give the printer a separate
  2.4 GHz network, because many printers cope badly with band steering.
- Update the printer firmware and driver, as manufacturers frequently fix
  wireless bugs.
PARTIAL
- Wireless printers are convenient because any device in the house can print to
  them.
- A print queue full of stuck jobs can make a printer look offline to the
  computer.
- Inkjet printers need occasional use to stop the nozzles from drying out.

TOPIC cooking techniques
VOCAB ingredient: onions; chicken thighs; mushrooms; carrots; salmon fillets;
  potatoes; aubergines
VOCAB pan: cast iron skillet; heavy stainless pan; Dutch oven; thick carbon
  steel pan
TITLE Kitchen techniques worth learning
TITLE Notes from a home cook
TITLE Better results from everyday cooking
TITLE Cooking fundamentals
TITLE Habits of confident cooks
GENERAL
- Read the whole recipe before you start so nothing surprises you halfway
  through.
- Prepare and measure ingredients before turning on the heat, which cooks call
  mise en place.
- A {pan} holds heat well and gives more even results than a thin pan.
- Season in small amounts and taste as you go.
- Sharp knives are safer than blunt ones because they do not slip.
- Let meat rest after cooking so the juices settle back into the fibres.
- Crowding {ingredient} in a pan lowers the temperature and makes food steam
  instead of brown.
- An instant-read thermometer removes the guesswork from cooking meat and fish.
- Salting {ingredient} early draws out moisture, which helps some dishes and
  spoils others.
- A splash of acid such as lemon juice or vinegar brightens a heavy dish at the
  end.
- Dried herbs go in early, while fresh soft herbs are best added at the end.
- Clean as you go and the kitchen never gets out of hand.

FACET sear_steak
QUERY how do I get a good crust when searing steak
SUBJECT searing steak
TITLE A deep brown crust on pan-seared steak
TITLE Searing steak at home
ANSWER
- Pat the steak completely dry with paper towels, because surface moisture has
  to evaporate before browning can start.
- Salt it at least forty minutes ahead or right before cooking, but not in
  between, when the surface is wet with drawn-out juices.
- Heat a heavy pan until a drop of water skitters across it, then add a thin
  film of oil with a high smoke point.
- Leave the steak alone for the first two or three minutes, since moving it
  around tears the crust before it has formed.
- For thick cuts, a reverse sear, with a slow oven first and a very hot pan
  last, gives an even inside and a deep crust.
PARTIAL
- The browned flavour on seared meat comes from the Maillard reaction between
  sugars and proteins.
- Ribeye and strip steaks have enough fat to stay juicy when cooked to medium.
- Searing does not actually seal in juices, despite the old saying.

FACET rice_sticky
QUERY how do I cook rice so it is not sticky
SUBJECT cooking fluffy rice
TITLE Fluffy, separate grains of rice
TITLE Stovetop rice without the mush
ANSWER
- Rinse long grain rice in several changes of cold water until the water runs
  nearly clear, to wash off loose surface starch.
- Use about one and a half parts water to one part long grain white rice,
  measured by volume.
- Bring it to a boil, cover with a tight lid, turn the heat to its lowest
  setting and leave it for 15 minutes without stirring.
- Let the rice rest off the heat, still covered, for ten minutes, then fluff it
  gently with a fork.
- Short grain and sushi rice are meant to cling together, so choose basmati or
  jasmine if you want separate grains.
PARTIAL
- Rice has been a staple food for billions of people for thousands of years.
- Leftover cooked rice should be cooled quickly and refrigerated within an hour
  or two.
- A rice cooker takes care of the heat control automatically.

FACET knife_sharpen
QUERY how do I sharpen a kitchen knife with a whetstone
SUBJECT knife sharpening
TITLE Sharpening knives on a water stone
TITLE Putting a new edge on a kitchen knife
ANSWER
- Soak a water stone for ten minutes, or just splash the surface if it is a
  splash-and-go stone.
- Hold the blade at a steady angle of about 15 to 20 degrees; two stacked coins
  under the spine make a useful guide.
- Sweep the edge across the stone from heel to tip until you can feel a small
  burr along the whole opposite side.
- Repeat on the other side, then move to a finer grit and use lighter strokes
  to refine the edge.
- Finish by stropping on leather or folded newspaper to remove the burr.
PARTIAL
- A honing steel realigns an edge but does not actually remove metal.
- Japanese knives are usually sharpened at a narrower angle than German ones.
- Dishwashers dull knives quickly, so wash them by hand.

FACET bread_rise
QUERY why didn't my bread dough rise
SUBJECT bread dough that stays flat
TITLE When bread dough refuses to rise
TITLE Troubleshooting a flat loaf
ANSWER
- Old or dead yeast is the most common cause, so proof it in warm water with a
  pinch of sugar and look for foam within ten minutes.
- Water hotter than about 50 degrees kills yeast, while very cold water slows
  it to a crawl.
- Large amounts of salt in direct contact with the yeast can hold it back, so
  mix the salt in with the flour.
- A cold kitchen can double the rising time, so put the bowl in an oven with
  only the light switched on.
- Dough made with too much flour is stiff and heavy, so weigh ingredients
  instead of using cups.
PARTIAL
- Kneading develops gluten, the stretchy network that traps gas in bread.
- Sourdough relies on wild yeast and bacteria instead of commercial yeast.
- A well risen loaf sounds hollow when you tap the bottom.

FACET emulsion
QUERY how do I fix a broken mayonnaise or sauce that has split
SUBJECT emulsified sauces
TITLE Rescuing a split sauce
TITLE Bringing mayonnaise and hollandaise back together
ANSWER
- Put a fresh egg yolk or a teaspoon of mustard in a clean bowl, then whisk the
  separated sauce into it drop by drop.
- A tablespoon of warm water whisked in slowly can bring a slightly separated
  hollandaise back together.
- Once the new base thickens, add the rest of the curdled mixture in a thin
  stream while whisking constantly.
- Sauces usually separate because the oil went in too fast or the ingredients
  were at very different temperatures.
- For butter sauces, take the pan off the heat immediately at the first sign of
  oiliness.
PARTIAL
- An emulsion is a mixture of two liquids that would not normally combine, such
  as oil and water.
- Mustard contains natural emulsifiers, which is why it appears in so many
  dressings.
- Homemade mayonnaise tastes richer than the shop-bought kind but keeps for
  only a few days.

FACET caramelize
QUERY how long does it take to caramelize onions
SUBJECT caramelised onions
TITLE Slow-cooked caramelised onions
TITLE Patience and deep golden onions
ANSWER
- Properly caramelised onions take 40 minutes to an hour over medium-low heat,
  and recipes promising ten minutes are only softening them.
- Slice the onions evenly and start them with butter or oil and a pinch of salt
  to draw out moisture.
- Stir every few minutes and add a splash of water to lift the brown film from
  the pan whenever it starts to stick.
- A wide heavy pan gives the onions room, so they brown instead of steaming.
- Stop when they are deep amber, soft and jammy; by then they will have shrunk
  to about a quarter of their original volume.
PARTIAL
- Onions are the base of countless soups, stews and sauces.
- Sweet onion varieties contain more sugar but are not necessary for good
  results.
- Cutting onions with a very sharp knife crushes fewer cells and causes fewer
  tears.

TOPIC amateur astronomy
VOCAB object: the Moon; Jupiter; Saturn; the Orion Nebula; the Pleiades; the
  Beehive Cluster
VOCAB kit: pair of 10x50 binoculars; small refractor; Dobsonian reflector;
  planisphere; star atlas
VOCAB accessory: red torch; planisphere; star atlas; spare set of batteries;
  pencil and notebook
TITLE Stargazing for beginners
TITLE Notes from the back garden observatory
TITLE Getting started with amateur astronomy
TITLE Making the most of a clear night
TITLE Observing habits that help
GENERAL
- Dark skies away from city lights reveal many times more stars than a suburban
  garden.
- Let your eyes adapt to the dark for at least twenty minutes before judging
  what you can see.
- A {kit} is a sensible early purchase for someone just starting out.
- Check the weather and the phase of the Moon before planning a night out.
- Dress more warmly than you think, because standing still at night gets cold
  quickly.
- Free planetarium software shows where {object} will be on any given night.
- Local astronomy clubs often lend equipment and run public viewing evenings.
- Steady air, which observers call good seeing, matters as much as a clear sky.
- Record what you observe in a logbook with the date, time and equipment used.
- Even modest equipment shows {object} in satisfying detail.
- Keep a {accessory} in your observing bag so you are not fumbling in the dark.
- Turbulence near the horizon blurs the view, so observe objects when they are
  high in the sky.

FACET first_telescope
QUERY what is a good first telescope for a beginner
SUBJECT choosing a telescope
TITLE Buying your first telescope
TITLE Which telescope to start with
ANSWER
- A 150 or 200 millimetre Dobsonian reflector gives the most aperture for the
  money and is simple to set up.
- Avoid cheap instruments that advertise huge magnification, since aperture,
  not magnification, decides what you can see.
- A manual mount is easier to learn than a computerised one, and it teaches you
  your way around the sky.
- If you need something portable, an 80 millimetre refractor on a sturdy
  alt-azimuth mount is a good compromise.
- Budget for a low-power eyepiece and a red dot finder, because the finders
  supplied with many scopes are poor.
PARTIAL
- Binoculars are a great way to learn the constellations before buying a
  telescope.
- Telescopes come in three main designs: refractors, reflectors and
  catadioptric hybrids.
- A telescope that is too heavy to carry outside will end up gathering dust.

FACET collimate
QUERY how do I collimate a Newtonian reflector telescope
SUBJECT Newtonian reflector collimation
TITLE Aligning the mirrors of a Newtonian
TITLE Collimation without the fear
ANSWER
- Put a collimation cap or a Cheshire eyepiece in the focuser so that your eye
  is exactly centred.
- First adjust the tilt screws of the secondary mirror until the primary mirror
  appears centred and round in it.
- Then turn the primary mirror's adjustment knobs until the centre spot on the
  primary lines up with the ring of the cap.
- Check the result with a star test: a slightly defocused bright star should
  show evenly spaced, concentric rings.
- Collimate after transporting the telescope, since bumps in the car knock the
  mirrors out of line.
PARTIAL
- Newtonian reflectors use a curved primary mirror and a flat secondary mirror.
- Poor collimation softens the view at high power, especially on planets.
- Refractors rarely need collimation because their lenses are fixed in place.

FACET see_saturn
QUERY when is the best time to see Saturn's rings
SUBJECT observing Saturn
TITLE Planning a look at Saturn
TITLE The ringed planet through a small telescope
ANSWER
- Saturn is best viewed around opposition, when it sits opposite the Sun in the
  sky, shines brightest and is visible all night.
- Observe when the planet is highest in the south, usually around local
  midnight near opposition, so you look through less air.
- Even a 60 millimetre telescope at 50x magnification shows the rings clearly
  on a steady night.
- Every fifteen years or so the rings appear edge-on from Earth and almost
  vanish, so check how tilted they are in the current year.
- Astronomy apps and yearly almanacs list the opposition date and the months
  when the planet is well placed.
PARTIAL
- Saturn's rings are made of countless pieces of ice and rock.
- Saturn takes about 29 years to orbit the Sun.
- Its largest moon, Titan, is visible as a faint point of light near the
  planet.

FACET meteor
QUERY how can I see a meteor shower
SUBJECT meteor showers
TITLE Watching a meteor shower
TITLE Shooting stars: when and where to look
ANSWER
- Check the peak date of a major shower such as the Perseids in August or the
  Geminids in December.
- Go somewhere dark, lie back on a reclining chair and look at a wide area of
  sky about halfway up.
- The best rates usually come after midnight, when your side of the Earth faces
  into the stream of debris.
- No telescope or binoculars are needed, because they narrow your view and you
  would miss most meteors.
- A bright Moon washes out faint meteors, so showers near new Moon are the
  easiest to enjoy.
PARTIAL
- Meteors are grains of dust burning up as they hit the atmosphere at high
  speed.
- Each shower is named after the constellation its meteors appear to come from.
- A very bright meteor is called a fireball.

FACET light_pollution
QUERY how can I observe stars from a city with light pollution
SUBJECT stargazing under bright city skies
TITLE Urban astronomy under orange skies
TITLE Observing from a light polluted town
ANSWER
- Concentrate on bright targets that cut through skyglow, such as the Moon, the
  planets, double stars and bright star clusters.
- Shield your eyes from nearby lamps with a hood or a dark cloth, or simply
  stand in the shadow of a building.
- A narrowband or UHC filter improves views of emission nebulae, although it
  does nothing for galaxies.
- Observe late at night, when many lights are switched off and the air is often
  steadier.
- Electronically assisted astronomy with a small camera can show faint objects
  live on a screen even under bright skies.
PARTIAL
- Light pollution is growing worldwide and hides the Milky Way from most
  people.
- Dark sky parks protect some areas from artificial light.
- Full cutoff street lamps point their light down instead of into the sky.

FACET moon_photo
QUERY how do I photograph the Moon with my phone
SUBJECT lunar photography
TITLE Phone snapshots of the Moon
TITLE Taking pictures through the eyepiece
ANSWER
- Hold the phone to the eyepiece of a telescope or binoculars, a method called
  afocal photography, and use a cheap adapter clamp to make it far easier.
- Tap on the Moon to focus and then lower the exposure, because the automatic
  setting usually turns it into a white blob.
- Use the self-timer or a headphone volume button as a shutter release to avoid
  shake.
- The Moon looks most dramatic near first or last quarter, when shadows along
  the terminator show craters in relief.
- Shoot several frames and keep the sharpest, or stack them with free software
  for more detail.
PARTIAL
- The Moon is the brightest object in the night sky and easy to find.
- Phone cameras have wide lenses that make the Moon look tiny without
  magnification.
- The same side of the Moon always faces the Earth.

TOPIC personal finance
VOCAB account: current account; savings account; pension; index fund; credit
  card; mortgage
VOCAB goal: a house deposit; retirement; a new car; a wedding; university fees
TITLE Money basics
TITLE Notes on managing household money
TITLE Personal finance without jargon
TITLE Building better money habits
TITLE Planning your finances
GENERAL
- Write down your income and regular spending before making any big money
  decision.
- Automating transfers on payday makes saving much easier than relying on
  willpower.
- Fees that look small add up to large sums over decades.
- Check the fees and interest on your {account} at least once a year.
- Saving for {goal} is easier with a separate account and a clear target.
- Financial advice should match your own situation, and what suits a friend may
  not suit you.
- Keep important documents such as statements and contracts in one place.
- Review your plans after any major life change, such as a new job or a move.
- Be wary of anyone who promises high returns with no risk.
- Inflation slowly erodes the value of cash that sits idle.
- Your {account} should be reviewed whenever your goals change.
- Talking openly about money with a partner avoids many later arguments.

FACET emergency_fund
QUERY how much should I keep in an emergency fund
SUBJECT emergency savings
TITLE Sizing an emergency fund
TITLE A cash cushion for bad surprises
ANSWER
- A common guideline is three to six months of essential expenses, such as
  rent, food, utilities and debt payments.
- Aim for six months or more if your income is irregular, you are self-employed
  or you are the only earner in the household.
- Keep the emergency fund in an easy-access savings account, not in shares that
  could fall just when you need the money.
- Start with a smaller first target of one month's costs, then build up with
  automatic transfers.
- Only use it for genuine emergencies like job loss, urgent repairs or medical
  bills, and refill it afterwards.
PARTIAL
- Unexpected expenses are a major reason people fall into debt.
- Easy-access savings accounts usually pay less interest than fixed-term ones.
- Insurance can cover some emergencies that would otherwise drain your savings.

FACET debt_payoff
QUERY should I pay off debt with the avalanche or snowball method
SUBJECT strategies for repaying debt
TITLE Debt avalanche versus debt snowball
TITLE Choosing which debt to repay first
ANSWER
- The avalanche method puts extra money toward the debt with the highest
  interest rate first, which costs the least interest overall.
- The snowball method clears the smallest balance first, giving quick wins that
  keep many people motivated.
- Either way, keep making minimum payments on every debt and put all spare
  money toward one target at a time.
- If your debts have similar interest rates, the snowball approach costs little
  extra and may be easier to stick with.
- When one card charges far more than the others, the avalanche method usually
  wins by a wide margin.
PARTIAL
- Credit card interest rates are often above 20 percent a year.
- Debt charities offer free advice if repayments have become unmanageable.
- Consolidating debts into one loan can simplify payments but may extend the
  term.

FACET index_funds
QUERY what is an index fund and why do people recommend it
SUBJECT index fund investing
TITLE Index funds explained
TITLE Why passive funds are so popular
ANSWER
- An index fund buys all, or a representative sample, of the shares in a market
  index such as a broad stock market benchmark.
- Because it simply follows the index, it charges very low fees compared with
  actively managed funds.
- Over long periods most active managers fail to beat their index after costs,
  which is why index funds are widely recommended.
- Holding hundreds or thousands of companies spreads the risk that any single
  business fails.
- They suit long-term investors who want to invest regularly without picking
  individual stocks.
PARTIAL
- Stock markets rise and fall, sometimes sharply, over short periods.
- Exchange-traded funds are bought and sold on a stock exchange like individual
  shares.
- Investing is generally suited to money you will not need for at least five
  years.

FACET credit_score
QUERY how can I improve my credit score
SUBJECT credit scores
TITLE Raising a low credit score
TITLE What lenders look for in your credit file
ANSWER
- Pay every bill on time, as payment history is the biggest factor in most
  credit scores.
- Keep credit card balances well below their limits, and using under 30 percent
  of available credit helps.
- Register on the electoral roll or the local equivalent so lenders can confirm
  your address.
- Check your credit report for errors and dispute any accounts or late payments
  that are not yours.
- Avoid making many credit applications in a short time, since each one leaves
  a hard search on your file.
PARTIAL
- Lenders use credit scores to decide whether to offer a loan and at what rate.
- Different credit agencies may show slightly different scores for the same
  person.
- Buy now, pay later plans are increasingly reported to credit agencies.

FACET budget_rule
QUERY how does the 50/30/20 budget rule work
SUBJECT the 50/30/20 budget
TITLE Needs, wants and savings: the 50/30/20 split
TITLE A simple percentage budget
ANSWER
- The rule splits take-home pay into 50 percent for needs, 30 percent for wants
  and 20 percent for savings and extra debt repayment.
- Needs are costs you cannot easily avoid, such as rent, groceries, insurance
  and minimum loan payments.
- Wants include eating out, holidays, streaming subscriptions and other things
  you could cut if you had to.
- If needs take more than half of your income, treat the percentages as a
  direction to move in rather than a strict limit.
- Track spending for a month in the three categories to see how far your
  current habits are from the target.
PARTIAL
- A budget is a plan for where your money goes each month.
- Many banking apps sort transactions into categories automatically.
- Zero-based budgeting gives every pound or dollar a specific job.

FACET compound_interest
QUERY how does compound interest work on savings
SUBJECT compound interest
TITLE Compound interest in plain words
TITLE How savings grow over time
ANSWER
- Compound interest means you earn interest on previously earned interest as
  well as on the money you originally saved.
- For example, 1,000 saved at 5 percent a year grows to 1,050 after one year
  and to about 1,629 after ten years.
- The more often interest is added, for example monthly instead of yearly, the
  faster the balance grows.
- Time matters most, because money saved in your twenties has decades longer to
  compound than money saved in your fifties.
- The rule of 72 gives a quick estimate: divide 72 by the interest rate to find
  roughly how many years it takes to double.
PARTIAL
- Savings accounts quote an annual equivalent rate to allow a fair comparison.
- Debt compounds too, which is why unpaid credit card balances grow so quickly.
- Interest rates on savings move with the central bank's base rate.

TOPIC first aid
VOCAB supply: sterile dressings; disposable gloves; a triangular bandage;
  adhesive plasters; an instant cold pack; tweezers
VOCAB place: car; kitchen; camping bag; workplace; caravan
TITLE First aid essentials
TITLE Be ready to help
TITLE Notes from a first aid course
TITLE Looking after minor injuries at home
TITLE What every household should know about first aid
GENERAL
- Keep a first aid kit in the {place} and check its contents every few months.
- A first aid course teaches skills that are hard to learn from reading alone.
- Make sure the area is safe for you before helping anyone else.
- Call the emergency number early if you are unsure how serious an injury is.
- Wash your hands or put on gloves before treating an open wound.
- Stay calm and explain what you are doing, because reassurance helps an
  injured person.
- A well stocked kit includes {supply} and a list of emergency numbers.
- Replace items in the kit as soon as you use them.
- Note the time an injury happened, because paramedics will ask.
- First aid is meant to keep someone safe until professional help arrives.
- Children and older people can become seriously ill more quickly than healthy
  adults.
- Store {supply} in a place that everyone in the household knows.

FACET burn
QUERY what should I do for a minor burn
SUBJECT small burns and scalds
TITLE Treating small burns and scalds
TITLE Cooling a burn the right way
ANSWER
- Cool the burn under cool or lukewarm running water for at least twenty
  minutes as soon as possible.
- Remove rings, watches and clothing near the burn unless they are stuck to the
  skin.
- Cover the burn loosely with cling film or a clean non-fluffy dressing to
  protect it.
- Do not put ice, butter or creams on a burn, as they can damage the skin
  further.
- Seek medical help for burns larger than the person's hand, on the face, hands
  or genitals, or any burn that looks white or charred.
PARTIAL
- Burns in the home are most often caused by hot drinks, cooking oil and irons.
- Sunburn is a burn caused by ultraviolet light.
- Blisters that form after a burn help protect the skin underneath.

FACET nosebleed
QUERY how do I stop a nosebleed
SUBJECT nosebleeds
TITLE Dealing with a nosebleed
TITLE Bleeding from the nose: simple first aid
ANSWER
- Sit down and lean forward, not back, so blood drains out of the nose instead
  of down the throat.
- Pinch the soft part of the nose just below the bony bridge and hold it firmly
  for ten to fifteen minutes without letting go.
- Breathe through your mouth and spit out any blood rather than swallowing it.
- A cold pack on the bridge of the nose can help the blood vessels narrow.
- Get medical help if the bleeding lasts more than twenty minutes, follows a
  blow to the head or keeps coming back.
PARTIAL
- Nosebleeds are common in dry weather, when the lining of the nose cracks.
- People taking blood-thinning medicine may bleed for longer.
- Most nosebleeds come from small vessels near the front of the nose.

FACET sprain
QUERY how should I treat a sprained ankle
SUBJECT ankle sprains
TITLE Caring for a twisted ankle
TITLE The first days after an ankle sprain
ANSWER
- Rest the ankle and avoid putting weight on it for the first day or two.
- Apply an ice pack wrapped in a cloth for about fifteen to twenty minutes
  every two to three hours.
- Use a compression bandage to limit swelling, but loosen it if the toes become
  numb or cold.
- Keep the ankle raised above the level of the heart when sitting or lying
  down.
- See a doctor if you cannot put any weight on the foot, if the bone is tender
  to touch or if it is not improving after a few days.
PARTIAL
- A sprain is an injury to the ligaments that hold a joint together.
- Ankle sprains often happen on uneven ground or when landing from a jump.
- Strength and balance exercises reduce the chance of spraining the same ankle
  again.

FACET choking
QUERY what do I do if an adult is choking
SUBJECT choking emergencies
TITLE Helping someone who is choking
TITLE Back blows and abdominal thrusts
ANSWER
- If they can cough, encourage them to keep coughing, because that is the most
  effective way to clear the blockage.
- If they cannot cough, speak or breathe, lean them forward and give up to five
  sharp back blows between the shoulder blades with the heel of your hand.
- If back blows fail, give up to five abdominal thrusts: stand behind them, put
  a fist above the navel and pull sharply inwards and upwards.
- Alternate five back blows and five abdominal thrusts, and call the emergency
  number if the object does not come out.
- Anyone who has had abdominal thrusts should be checked by a doctor
  afterwards.
PARTIAL
- Choking happens when food or an object blocks the airway.
- Cutting food into small pieces reduces the risk for young children.
- Choking procedures for babies differ from those used for older people.

FACET bee_sting
QUERY how do I treat a bee sting
SUBJECT insect stings
TITLE First aid for bee and wasp stings
TITLE After a sting in the garden
ANSWER
- Scrape the sting out sideways with a fingernail or the edge of a card as
  quickly as possible.
- Wash the area with soap and water and apply a cold compress to reduce
  swelling.
- An antihistamine tablet or cream can ease itching and swelling over the
  following day.
- Call for emergency help immediately if the person has difficulty breathing,
  swelling of the face or throat, or feels faint, as these are signs of
  anaphylaxis.
- People with a known severe allergy should use their adrenaline auto-injector
  straight away.
PARTIAL
- Bees usually only sting when they feel threatened.
- Wasps can sting several times, while a honeybee leaves its sting behind.
- Sweet drinks outdoors attract stinging insects in late summer.

FACET cpr
QUERY how do I perform CPR on an adult
SUBJECT cardiopulmonary resuscitation
TITLE Chest compressions and rescue breaths
TITLE CPR for adults: the basics
ANSWER
- Before starting CPR, check for a response and normal breathing, then call the
  emergency number and ask someone to bring a defibrillator.
- Place the heel of one hand in the centre of the chest, put the other hand on
  top and interlock your fingers.
- Press down hard and fast, about five to six centimetres deep at a rate of 100
  to 120 compressions a minute.
- If you are trained, give two rescue breaths after every thirty compressions;
  otherwise continue with hands-only compressions.
- Use the defibrillator as soon as it arrives and follow its spoken
  instructions.
PARTIAL
- Cardiac arrest means the heart has stopped pumping blood effectively.
- Public defibrillators are now found in many shops, stations and sports
  centres.
- Brain damage can begin within a few minutes without oxygen.

TOPIC home repair
VOCAB tool: adjustable spanner; cordless drill; putty knife; spirit level; stud
  finder; utility knife
VOCAB room: bathroom; kitchen; hallway; bedroom; utility room
TITLE Small repairs around the house
TITLE Notes for the weekend fixer
TITLE A practical home maintenance guide
TITLE Household repairs you can do yourself
TITLE Keeping a house in good order
GENERAL
- Turn off the water or the power before working on anything connected to it.
- Take a photo before you take something apart so you know how it goes back
  together.
- A decent {tool} earns its place in even the smallest toolbox.
- Buy one good {tool} rather than a cheap set that breaks.
- Protect the floor in the {room} with dust sheets before starting a messy job.
- Most hardware shops will match a part if you bring the old one with you.
- Safety glasses cost very little and protect against flying debris.
- Small repairs done promptly prevent larger and more expensive ones later.
- Good lighting makes almost every repair easier.
- Know where your main water stop tap and fuse box are before an emergency
  happens.
- Some jobs, like gas and major electrical work, legally require a qualified
  professional.
- Keep spare screws, washers and fuses in labelled containers.

FACET dripping_tap
QUERY how do I fix a dripping tap
SUBJECT leaking taps
TITLE Stopping a tap that drips
TITLE Replacing tap washers and cartridges
ANSWER
- Turn off the water supply to the tap using the isolation valve underneath it,
  or at the main stop tap.
- Remove the handle and unscrew the headgear to reach the washer or ceramic
  cartridge.
- On older compression taps a worn rubber washer is the usual cause of a drip,
  and it costs very little to replace.
- Modern quarter-turn taps use ceramic discs, and if the cartridge is scratched
  or cracked the whole cartridge should be replaced.
- Take the old washer or cartridge to a hardware shop to make sure you get the
  right size.
PARTIAL
- A tap dripping once a second can waste thousands of litres of water a year.
- Limescale builds up quickly on taps in hard water areas.
- Mixer taps combine hot and cold water in a single spout.

FACET drywall_hole
QUERY how do I patch a hole in drywall
SUBJECT plasterboard walls
TITLE Patching holes in plasterboard
TITLE Invisible repairs to a damaged wall
ANSWER
- Small nail holes only need a dab of filler pressed in with a putty knife and
  sanded flush once dry.
- For holes up to about ten centimetres, cover them with a self-adhesive mesh
  patch and spread joint compound over it in thin layers.
- For larger holes, cut a neat square, screw a wooden batten behind the opening
  and fix a matching piece of plasterboard to it.
- Feather each coat of compound a little wider than the last, and let it dry
  fully before the next one.
- Sand lightly, prime the repair and then paint, otherwise the mended area will
  show through as a dull patch.
PARTIAL
- Plasterboard walls are common in modern houses and are easy to damage.
- Door handles often punch holes in walls where there is no door stop.
- Drywall and plasterboard are two names for the same sheet material.

FACET toilet_running
QUERY why does my toilet keep running after flushing
SUBJECT toilet cisterns
TITLE A toilet that will not stop filling
TITLE Fixing a constantly running cistern
ANSWER
- Lift the cistern lid and check the flapper or flush valve seal, because if it
  is worn or warped, water leaks into the bowl continuously.
- If water is spilling into the overflow pipe, lower the float so the fill
  valve shuts off sooner.
- A chain that is too short can hold the flapper slightly open, so leave a
  little slack.
- Add a few drops of food colouring to the cistern; if colour appears in the
  bowl without flushing, the seal is leaking.
- Replacement fill valves and flush valve seals are inexpensive and usually fit
  without special tools.
PARTIAL
- A toilet that runs all day can add a noticeable amount to the water bill.
- Dual flush toilets use less water for a short flush.
- Older toilets use far more water per flush than modern ones.

FACET squeaky_door
QUERY how do I stop a door from squeaking
SUBJECT door hinges
TITLE Silencing a squeaky door
TITLE Hinge care for quiet doors
ANSWER
- Squeaks come from the hinges, so lift out one hinge pin at a time by tapping
  it upwards with a nail and hammer.
- Clean the pin with wire wool, coat it with a little petroleum jelly or white
  lithium grease and tap it back in.
- A spray lubricant with a thin straw works in a hurry, but wipe off the excess
  so it does not attract dust.
- Open and close the door several times to work the lubricant into the hinge.
- If the door also sags, tighten the hinge screws and replace any that spin
  with longer ones that reach the frame.
PARTIAL
- Doors can swell in humid weather and rub against the frame.
- Heavy doors often need three hinges instead of two.
- Soft-close door closers stop doors from slamming.

FACET grout_mould
QUERY how do I remove mould from bathroom grout
SUBJECT mould in bathrooms
TITLE Cleaning black mould from tile grout
TITLE Keeping shower grout clean
ANSWER
- Scrub surface mould with a paste of baking soda and water, using an old
  toothbrush along the grout lines.
- For stubborn black marks, apply a diluted bleach solution or a mould remover
  spray, leave it for ten minutes and rinse well.
- Ventilate the room and wear gloves, and never mix bleach with other cleaning
  products.
- If the stains have gone deep into the grout, rake it out and regrout the
  affected lines.
- Seal the clean grout and run an extractor fan during and after showers to
  stop the mould returning.
PARTIAL
- Bathrooms are damp, warm spaces where mould grows easily.
- Silicone sealant around baths can also grow mould and is best replaced when
  it blackens.
- Condensation on cold walls is a sign that a room needs better ventilation.

FACET shelf_mount
QUERY how do I hang a heavy shelf on a wall
SUBJECT wall shelves
TITLE Hanging heavy shelves securely
TITLE Fixings that hold real weight
ANSWER
- Find the studs or solid masonry with a stud finder, and check for pipes and
  cables before drilling.
- Screw brackets directly into studs whenever possible, because timber holds
  far more weight than plasterboard alone.
- Where there is no stud, use heavy-duty hollow wall anchors such as metal
  spring toggles rated for the load.
- In brick or concrete, drill with a masonry bit and use wall plugs that match
  the screw size.
- Use a spirit level to mark both bracket positions before drilling so the
  shelf sits straight.
PARTIAL
- Floating shelves hide their fixings for a cleaner look.
- Books are heavier than most people expect, especially on a long shelf.
- Older houses may have lath and plaster walls that crumble when drilled.
"""


@dataclass
class Facet:
    key: str
    query: str = ""
    subject: str = ""
    titles: list[str] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)


@dataclass
class Topic:
    name: str
    vocab: dict[str, list[str]] = field(default_factory=dict)
    titles: list[str] = field(default_factory=list)
    general: list[str] = field(default_factory=list)
    facets: list[Facet] = field(default_factory=list)


@dataclass
class Doc:
    title: str
    sentences: list[str]
    topic: str
    facet: str | None = None  # facet key for facet documents
    label: int | None = None  # relevance to its own facet's query
    doc_id: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def logical_lines(raw: str) -> list[str]:
    lines: list[str] = []
    for line in raw.splitlines():
        if not line.strip():
            continue
        if line.startswith("  ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line.rstrip())
    return lines


def parse(raw: str) -> list[Topic]:
    topics: list[Topic] = []
    topic: Topic | None = None
    facet: Facet | None = None
    items: list[str] | None = None
    for line in logical_lines(raw):
        if line.startswith("- "):
            if items is None:
                raise ValueError(f"item outside a list: {line!r}")
            items.append(line[2:].strip())
            continue
        keyword, _, rest = line.partition(" ")
        rest = rest.strip()
        if keyword == "TOPIC":
            topic = Topic(rest)
            topics.append(topic)
            facet, items = None, None
            continue
        if topic is None:
            raise ValueError(f"{keyword} before the first TOPIC")
        if keyword == "VOCAB":
            name, _, values = rest.partition(":")
            topic.vocab[name.strip()] = [v.strip() for v in values.split(";")]
        elif keyword == "TITLE":
            (facet.titles if facet else topic.titles).append(rest)
        elif keyword == "GENERAL":
            items = topic.general
        elif keyword == "FACET":
            facet = Facet(rest)
            topic.facets.append(facet)
            items = None
        elif facet is None:
            raise ValueError(f"{keyword} outside a FACET")
        elif keyword == "QUERY":
            facet.query = rest
        elif keyword == "SUBJECT":
            facet.subject = rest
        elif keyword == "ANSWER":
            items = facet.answer
        elif keyword == "PARTIAL":
            items = facet.partial
        else:
            raise ValueError(f"unknown keyword in line {line!r}")
    return topics


def fill(template: str, vocab: dict[str, list[str]], rng: random.Random) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: rng.choice(vocab[m.group(1)]), template)


def general_sentences(topic: Topic, k: int, rng: random.Random) -> list[str]:
    return [fill(t, topic.vocab, rng) for t in rng.sample(topic.general, k)]


def opener(facet: Facet, rng: random.Random) -> str:
    return rng.choice(OPENERS).format(subject=facet.subject)


def fit(lead: list[str], core: list[str], tail: list[str]) -> list[str]:
    """Join sentence groups, dropping tail sentences to stay at six or fewer."""
    room = max(0, 6 - len(lead) - len(core))
    return lead + core + tail[:room]


def answer_doc(topic: Topic, facet: Facet, rng: random.Random) -> Doc:
    n = rng.choice([3, 3, 4])
    core = [facet.answer[i] for i in sorted(rng.sample(range(len(facet.answer)), n))]
    lead = [opener(facet, rng)] if rng.random() < 0.4 else []
    if rng.random() < 0.4:
        lead.append(rng.choice(facet.partial))
    tail = general_sentences(topic, rng.randint(1, 2), rng)
    title = rng.choice(facet.titles) + rng.choice(ANSWER_TITLE_SUFFIXES)
    return Doc(title, fit(lead, core, tail), topic.name, facet.key, 2)


def partial_doc(topic: Topic, facet: Facet, answer: str, rng: random.Random) -> Doc:
    background = rng.sample(facet.partial, rng.randint(1, 2))
    background.insert(rng.randint(0, len(background)), answer)
    lead = [opener(facet, rng)] if rng.random() < 0.5 else []
    tail = general_sentences(topic, rng.randint(1, 2), rng)
    title = f"{rng.choice(PARTIAL_TITLE_PREFIXES)} {facet.subject}"
    return Doc(title, fit(lead, background, tail), topic.name, facet.key, 1)


def background_doc(topic: Topic, facet: Facet, rng: random.Random) -> Doc:
    core = rng.sample(facet.partial, rng.randint(2, 3))
    lead = [opener(facet, rng)] if rng.random() < 0.5 else []
    tail = general_sentences(topic, rng.randint(1, 2), rng)
    title = f"{rng.choice(BACKGROUND_TITLE_PREFIXES)} {facet.subject}"
    return Doc(title, fit(lead, core, tail), topic.name, facet.key, 0)


def overview_doc(topic: Topic, used_titles: set[str], rng: random.Random) -> Doc:
    sentences = general_sentences(topic, rng.randint(3, 5), rng)
    if rng.random() < 0.5:
        # An off-facet aside makes overview documents harder to rule out.
        aside = rng.choice(rng.choice(topic.facets).partial)
        sentences.insert(rng.randint(1, len(sentences)), aside)
    title = rng.choice(topic.titles)
    while title in used_titles:
        title = f"{rng.choice(topic.titles)}: {rng.choice(OVERVIEW_TITLE_SUFFIXES)}"
    used_titles.add(title)
    return Doc(title, sentences[:6], topic.name)


def unique(make: Callable[[], Doc], seen: set[str], attempts: int = 50) -> Doc:
    """Call ``make()`` until it returns a document whose text is new."""
    for _ in range(attempts):
        doc = make()
        if doc.text not in seen:
            seen.add(doc.text)
            return doc
    raise RuntimeError("could not generate a distinct document")


def build_corpus(topics: list[Topic], rng: random.Random) -> list[Doc]:
    docs: list[Doc] = []
    seen: set[str] = set()
    for topic in topics:
        for facet in topic.facets:
            for _ in range(rng.choice([2, 3])):
                docs.append(unique(partial(answer_doc, topic, facet, rng), seen))
            for answer in rng.sample(facet.answer, 2):
                make = partial(partial_doc, topic, facet, answer, rng)
                docs.append(unique(make, seen))
            for _ in range(rng.choice([1, 2])):
                docs.append(unique(partial(background_doc, topic, facet, rng), seen))
        used_titles: set[str] = set()
        for _ in range(N_OVERVIEW_PER_TOPIC):
            docs.append(unique(partial(overview_doc, topic, used_titles, rng), seen))
    rng.shuffle(docs)
    for number, doc in enumerate(docs, start=1):
        doc.doc_id = f"doc{number:04d}"
    return docs


def tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in STOPWORDS}


def judgments(facet: Facet, docs: list[Doc]) -> dict[str, int]:
    """Relevance labels for one facet's query."""
    labels = {d.doc_id: d.label for d in docs if d.facet == facet.key}
    query_terms = tokens(facet.query)
    candidates = [
        (len(query_terms & tokens(f"{d.title} {d.text}")), d.doc_id)
        for d in docs
        if d.facet is not None and d.facet != facet.key
    ]
    candidates.sort(key=lambda c: (-c[0], c[1]))
    for overlap, doc_id in candidates[:N_HARD_NEGATIVES]:
        if overlap > 0:
            labels[doc_id] = 0
    return {doc_id: label for doc_id, label in labels.items() if label is not None}


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for qid in sorted(qrels):
            for doc_id in sorted(qrels[qid]):
                fh.write(f"{qid}\t{doc_id}\t{qrels[qid][doc_id]}\n")


def split_stats(qrels: dict[str, dict[str, int]]) -> dict[str, int]:
    labels = [label for judged in qrels.values() for label in judged.values()]
    return {
        "queries": len(qrels),
        "judgments": len(labels),
        **{f"label_{grade}": labels.count(grade) for grade in (2, 1, 0)},
    }


README = """\
# Sample BEIR-format dataset

A small, synthetic retrieval benchmark shipped with `haystack_irmetrics` so that
examples and tests can run offline. It follows the
[BEIR](https://github.com/beir-cellar/beir) folder layout and loads with
`beir.datasets.data_loader.GenericDataLoader`.

## Provenance and license

Written by the haystack_irmetrics project. The documents and queries are
original, fictional "household knowledge base" text about eight topics
({topics}). No text was copied from an existing dataset, website or book.
License: MIT, the same as the project.

## How it was generated

`python scripts/make_sample_dataset.py` (seed {seed}, Python standard library
only) rebuilds every file in this folder deterministically. Each topic has
hand-written facets: a natural-language question plus sentences that answer it
and sentences that are on-topic but do not. Documents of 3-6 sentences are
composed from those sentences, topic-wide sentence templates and small topic
vocabularies; a document's relevance label is decided together with its text:

- `2` highly relevant: three or four sentences that answer the question;
- `1` partially relevant: exactly one answering sentence plus background;
- `0` judged not relevant: background on the same subject without an answer,
  or documents about other questions that share the most words with the query.

Overview documents made of topic-wide sentences are unjudged distractors.

## Contents

| file | rows |
| --- | --- |
| `corpus.jsonl` (`_id`, `title`, `text`) | {n_docs} documents |
| `queries.jsonl` (`_id`, `text`) | {n_queries} queries |
| `qrels/test.tsv` | {test[judgments]} judgments for {test[queries]} queries \
({test[label_2]} x 2, {test[label_1]} x 1, {test[label_0]} x 0) |
| `qrels/dev.tsv` | {dev[judgments]} judgments for {dev[queries]} queries \
({dev[label_2]} x 2, {dev[label_1]} x 1, {dev[label_0]} x 0) |

Test and dev use disjoint queries, and {n_unjudged} queries appear in no qrels
file. `queries.jsonl` therefore holds {n_extra} queries that are not in the test
split, which `GenericDataLoader` drops when loading `split="test"`.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    topics = parse(DATA)
    facets = [facet for topic in topics for facet in topic.facets]
    docs = build_corpus(topics, rng)

    query_ids = {facet.key: f"q{n:02d}" for n, facet in enumerate(facets, start=1)}
    order = list(range(len(facets)))
    rng.shuffle(order)
    dev = {facets[i].key for i in order[:N_DEV]}
    unjudged = {facets[i].key for i in order[N_DEV : N_DEV + N_UNJUDGED]}
    qrels: dict[str, dict[str, dict[str, int]]] = {"test": {}, "dev": {}}
    for facet in facets:
        if facet.key not in unjudged:
            split = "dev" if facet.key in dev else "test"
            qrels[split][query_ids[facet.key]] = judgments(facet, docs)

    out: Path = args.out
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    write_jsonl(
        out / "corpus.jsonl",
        [{"_id": d.doc_id, "title": d.title, "text": d.text} for d in sorted(docs, key=lambda d: d.doc_id)],
    )
    write_jsonl(
        out / "queries.jsonl",
        [{"_id": query_ids[f.key], "text": f.query} for f in facets],
    )
    for split, split_qrels in qrels.items():
        write_qrels(out / "qrels" / f"{split}.tsv", split_qrels)

    stats = {split: split_stats(split_qrels) for split, split_qrels in qrels.items()}
    readme = README.format(
        topics=", ".join(topic.name for topic in topics),
        seed=args.seed,
        n_docs=len(docs),
        n_queries=len(facets),
        n_unjudged=N_UNJUDGED,
        n_extra=len(facets) - stats["test"]["queries"],
        **stats,
    )
    (out / "README.md").write_text(readme, encoding="utf-8", newline="\n")

    print(f"wrote {out}")
    print(f"  corpus:  {len(docs)} documents")
    print(f"  queries: {len(facets)} ({N_UNJUDGED} in no qrels file)")
    for split, split_stat in stats.items():
        print(f"  {split}: {split_stat}")


if __name__ == "__main__":
    main()
